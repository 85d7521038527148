package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.Step;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.Feature;
import org.jccl.device.kernels.LsaAllToAll;
import org.jccl.device.kernels.LsaPutSignal;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device API on the GPU, one process driving every GPU present (on one GPU, one rank whose LSA team is itself):
 * properties, device communicators created together in a group, a user kernel from source and from PTX, both shipped
 * kernels, and bad input refused before anything is enqueued. Needs NCCL 2.28+, NVRTC and the CUDA headers.
 */
@Tag("gpu")
class DeviceApiGpuTest {
    static final String FILL = """
            #include <nccl_device.h>
            // Every element of this rank's window becomes value + rank, inside an LSA barrier with the other ranks.
            extern "C" __global__ void fill(ncclWindow_t win, ncclDevComm devComm, float value, size_t n) {
              ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
              bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
              float* p = (float*) ncclGetLocalPointer(win, 0);
              for (size_t i = threadIdx.x + (size_t) blockIdx.x * blockDim.x; i < n; i += (size_t) blockDim.x * gridDim.x) {
                p[i] = value + devComm.rank;
              }
              bar.sync(ncclCoopCta(), cuda::memory_order_release);
            }
            """;
    static final String SCALE = """
            // No NCCL: x[i] *= factor.
            extern "C" __global__ void scale(float* x, float factor, int n) {
              int i = threadIdx.x + blockIdx.x * blockDim.x;
              if (i < n) x[i] *= factor;
            }
            """;

    static Backend backend;
    static List<Communicator> comms;
    static List<DeviceComm> devComms;

    @BeforeAll
    static void open() throws Exception {
        backend = Jccl.backend(BackendKind.NCCL);
        assumeTrue(backend.features().has(Feature.DEV_COMM_CREATE), "device communicators need NCCL 2.28+, loaded " + backend.describe());
        comms = backend.initAll(backend.deviceCount()).get(60, TimeUnit.SECONDS); // one LSA team of every GPU
        devComms = DeviceApi.createAll(comms, DeviceCommRequirements.builder().lsaBarrierCount(8).build()).get(60, TimeUnit.SECONDS);
    }

    @AfterAll
    static void close() throws Exception {
        if (devComms != null) closeAllDeviceComms(devComms);
        if (comms != null) comms.forEach(Communicator::close);
    }

    static List<Window> windows(long bytes) throws Exception {
        return OneSided.registerAll(comms, bytes, WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
    }

    static void closeAll(List<Window> windows) throws Exception {
        OneSided.closeAll(windows).get(60, TimeUnit.SECONDS);
    }

    static void closeAllDeviceComms(List<DeviceComm> devComms) throws Exception {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (DeviceComm d : devComms) all.add(d.closeAsync());
        for (CompletableFuture<Void> f : all) f.get(60, TimeUnit.SECONDS);
    }

    static void joinAll(List<Work> works) throws Exception {
        for (Work w : works) w.get(60, TimeUnit.SECONDS);
    }

    @Test
    void propertiesSayWhatIsKnown() throws Exception {
        for (Communicator c : comms) {
            DeviceProperties p = DeviceApi.of(c).properties().get(30, TimeUnit.SECONDS);
            assertEquals(c.rank(), p.rank());
            assertEquals(c.size(), p.size());
            assertEquals(c.device(), p.device());
            assertTrue(p.libraryHasDeviceApi());
            boolean queryable = backend.features().has(Feature.COMM_QUERY_PROPERTIES);
            assertEquals(queryable, p.queried());
            assertEquals(queryable, p.deviceApiSupport().isPresent());
            if (queryable) assertEquals(Boolean.TRUE, p.deviceApiSupport().get(), p.toString());
        }
    }

    @Test
    void deviceCommunicatorsKnowTheirTeams() {
        for (int i = 0; i < comms.size(); i++) {
            DeviceComm d = devComms.get(i);
            assertEquals(i, d.rank());
            assertEquals(comms.size(), d.size());
            assertEquals(comms.size(), d.lsaSize(), "one host, NVLink: one LSA team");
            assertEquals(i, d.lsaRank());
            assertTrue(d.bytes().length >= 200);
        }
    }

    @Test
    void aUserKernelFromSourceUsesItsWindowAndLsaBarrier() throws Exception {
        int n = 1 << 16;
        List<Window> wins = windows(4L * n);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(KernelSource.of("fill.cu", FILL), 0))) {
            Kernel fill = library.kernel("fill");
            assertEquals(4, fill.parameterCount().orElseThrow(), fill.toString());
            List<Work> works = new ArrayList<>();
            for (int r = 0; r < comms.size(); r++) {
                works.add(DeviceApi.of(comms.get(r)).launch(fill, LaunchConfig.of(4, 256),
                        KernelArgs.create().window(wins.get(r)).deviceComm(devComms.get(r)).float32(42f).int64(n)));
            }
            joinAll(works);
            for (int r = 0; r < comms.size(); r++) {
                float[] got = wins.get(r).buffer().readFloats(0, n);
                for (int i = 0; i < n; i += 997) assertEquals(42f + r, got[i], "rank " + r + " element " + i);
                assertEquals(42f + r, got[n - 1]);
            }
        } finally {
            closeAll(wins);
        }
    }

    @Test
    void aCapturedStepHoldsTheWindowAndDeviceCommunicatorOfItsKernel() throws Exception {
        int n = 1 << 12;
        List<Window> wins = windows(4L * n);
        List<DeviceComm> held = DeviceApi.createAll(comms, DeviceCommRequirements.builder().lsaBarrierCount(4).build())
                .get(60, TimeUnit.SECONDS);
        List<Step> steps = new ArrayList<>();
        List<KernelLaunch> launches = new ArrayList<>();
        try (KernelLibrary library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(KernelSource.of("fill.cu", FILL), 0))) {
            Kernel fill = library.kernel("fill");
            List<CompletableFuture<Step>> building = new ArrayList<>();
            for (int r = 0; r < comms.size(); r++) {
                KernelLaunch launch = DeviceApi.of(comms.get(r)).prepare(fill, LaunchConfig.of(4, 256),
                        KernelArgs.create().window(wins.get(r)).deviceComm(held.get(r)).float32(7f).int64(n));
                launches.add(launch);
                building.add(Step.builder(comms.get(r)).add(launch.operation()).build());
            }
            for (CompletableFuture<Step> f : building) steps.add(f.get(60, TimeUnit.SECONDS));
            assertTrue(steps.get(0).isCaptured());
            List<CompletableFuture<Void>> released = new ArrayList<>();
            for (int r = 0; r < comms.size(); r++) {
                released.add(held.get(r).closeAsync());
                released.add(wins.get(r).closeAsync());
            }
            for (int round = 0; round < 3; round++) {
                for (Window w : wins) w.buffer().write(0, new float[n]);
                List<Work> works = new ArrayList<>();
                for (Step s : steps) works.add(s.replay());
                joinAll(works);
                for (int r = 0; r < comms.size(); r++) {
                    assertEquals(7f + r, wins.get(r).buffer().readFloats(0, n)[n - 1], "round " + round + ", rank " + r);
                }
            }
            for (CompletableFuture<Void> f : released) assertFalse(f.isDone(), "released under a step");
            for (Step s : steps) s.closeAsync();
            for (CompletableFuture<Void> f : released) f.get(60, TimeUnit.SECONDS);
        } finally {
            for (Step s : steps) s.close();
            for (KernelLaunch l : launches) l.close();
            closeAllDeviceComms(held);
            closeAll(wins);
        }
    }

    @Test
    void aKernelLoadedFromPtxRuns() throws Exception {
        KernelImage ptx = KernelCompiler.of(backend).compilePtx(KernelSource.of("scale.cu", SCALE), 0);
        assertEquals(KernelImage.Format.PTX, ptx.format());
        assertTrue(new String(ptx.bytes()).contains(".entry scale"), "PTX text names the kernel");
        Communicator c = comms.get(0);
        float[] values = new float[1000];
        for (int i = 0; i < values.length; i++) values[i] = i;
        try (KernelLibrary library = KernelLibrary.load(backend, ptx);
             var x = backend.allocate(c.device(), 4L * values.length)) {
            x.write(0, values);
            DeviceApi.of(c).launch(library.kernel("scale"), LaunchConfig.of(4, 256),
                    KernelArgs.create().pointer(x).float32(2.5f).int32(values.length)).get(60, TimeUnit.SECONDS);
            float[] got = x.readFloats(0, values.length);
            for (int i = 0; i < values.length; i++) assertEquals(2.5f * i, got[i]);
        }
    }

    @Test
    void theLsaAllToAllDeliversEveryBlock() throws Exception {
        int ranks = comms.size();
        int blockInts = 1 << 14;
        long blockBytes = 4L * blockInts;
        List<Window> send = windows(blockBytes * ranks);
        List<Window> recv = windows(blockBytes * ranks);
        try {
            for (int r = 0; r < ranks; r++) {
                int[] data = new int[blockInts * ranks];
                for (int p = 0; p < ranks; p++) for (int i = 0; i < blockInts; i++) data[p * blockInts + i] = r * 1_000_000 + p * 100_000 + i;
                send.get(r).buffer().write(0, data);
            }
            for (int round = 0; round < 3; round++) { // again and again: the entry barrier keeps rounds apart
                List<Work> works = new ArrayList<>();
                for (int r = 0; r < ranks; r++) works.add(LsaAllToAll.of(devComms.get(r)).run(send.get(r), 0, recv.get(r), 0, blockBytes));
                joinAll(works);
            }
            for (int r = 0; r < ranks; r++) {
                int[] got = recv.get(r).buffer().readInts(0, blockInts * ranks);
                for (int p = 0; p < ranks; p++) {
                    for (int i = 0; i < blockInts; i += 101) assertEquals(p * 1_000_000 + r * 100_000 + i, got[p * blockInts + i]);
                }
            }
        } finally {
            closeAll(send);
            closeAll(recv);
        }
    }

    @Test
    void aDevicePutSignalsEveryPeer() throws Exception {
        int ranks = comms.size();
        int ints = 1 << 18;
        long half = 4L * ints;
        long slot = 2 * half;
        List<Window> wins = windows(2 * half + LsaPutSignal.SLOT_BYTES);
        try {
            for (Window w : wins) w.buffer().write(slot, new long[] {0, 0});
            long[] signals = new long[ranks];
            for (int from = 0; from < ranks; from++) {
                int[] data = new int[ints];
                for (int i = 0; i < ints; i++) data[i] = i * 7 + 3 + from * 1_000_000;
                wins.get(from).buffer().write(0, data);
                for (int to = 0; to < ranks; to++) {
                    if (to == from) continue;
                    // The put first: on one GPU both go to the same stream, where a wait issued first would hold the put.
                    Work put = LsaPutSignal.of(devComms.get(from)).put(wins.get(from), 0, to, half, half, slot, 8);
                    Work wait = LsaPutSignal.of(devComms.get(to)).waitFor(wins.get(to), slot, 1);
                    put.get(60, TimeUnit.SECONDS);
                    wait.get(60, TimeUnit.SECONDS);
                    assertArrayEquals(data, wins.get(to).buffer().readInts(half, ints), "put from rank " + from + " to " + to);
                    assertEquals(++signals[to], wins.get(to).buffer().readLongs(slot, 1)[0], "the signal counts puts into rank " + to);
                }
            }
        } finally {
            closeAll(wins);
        }
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsEnqueued() throws Exception {
        Communicator c = comms.get(0);
        DeviceApi api = DeviceApi.of(c);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(KernelSource.of("scale.cu", SCALE), 0));
             var x = backend.allocate(c.device(), 4096)) {
            Kernel scale = library.kernel("scale");
            assertThrows(InvalidArgumentException.class, () -> api.launch(scale, LaunchConfig.of(1, 32), KernelArgs.create().pointer(x).float32(1f)));
            assertThrows(InvalidArgumentException.class,
                    () -> api.launch(scale, LaunchConfig.of(1, 32), KernelArgs.create().pointer(x).float64(1).int32(3)));
            assertThrows(InvalidArgumentException.class, () -> LaunchConfig.of(1, 2048));
            assertThrows(InvalidArgumentException.class, () -> api.launch(scale, LaunchConfig.of(1, 32).withSharedBytes(1 << 30),
                    KernelArgs.create().pointer(x).float32(1f).int32(3)));
            assertThrows(InvalidArgumentException.class, () -> library.kernel("noSuchKernel"));
        }
        KernelCompileException e = assertThrows(KernelCompileException.class,
                () -> KernelCompiler.of(backend).compile(KernelSource.of("broken.cu", "extern \"C\" __global__ void k() { undeclared(); }"), 0));
        assertTrue(e.log().contains("undeclared"), e.log());
        List<DeviceComm> temporary = DeviceApi.createAll(comms, DeviceCommRequirements.builder().lsaBarrierCount(1).build())
                .get(60, TimeUnit.SECONDS);
        assertFalse(temporary.get(0).isClosed());
        closeAllDeviceComms(temporary);
        assertTrue(temporary.get(0).isClosed());
        List<Window> wins = windows(4096);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(KernelSource.of("fill.cu", FILL), 0))) {
            assertThrows(InvalidUsageException.class, () -> api.launch(library.kernel("fill"), LaunchConfig.of(1, 32),
                    KernelArgs.create().window(wins.get(0)).deviceComm(temporary.get(0)).float32(1f).int64(16)));
        } finally {
            closeAll(wins);
        }
    }
}
