package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.Step;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The device API end to end on a whole NCCL backend of stub libraries that log every call ({@link StubBackend}).
 * What can be known without a GPU: requirement checks, device-communicator lifetimes, the include setup and cache of the compiler,
 * argument checks and marshalling, deferred unloading. The GPU runs are DeviceApiGpuTest's.
 */
class DeviceApiStubTest {
    /** The stub driver reads an image's "kernel NAME SIZE..." lines: fill(ncclWindow_t, ncclDevComm, float, size_t). */
    static final String FILL = "kernel fill 8 224 4 8\n";

    static Backend backend;
    static Communicator comm;

    @BeforeAll
    static void open() throws Exception {
        backend = StubBackend.backend();
        comm = StubBackend.communicator();
    }

    static List<String> calls(String library) throws Exception {
        return StubBackend.calls(library);
    }

    static long count(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).count();
    }

    static Throwable cause(Throwable t) {
        return t instanceof ExecutionException || t instanceof CompletionException ? t.getCause() : t;
    }

    static DeviceComm deviceComm(int lsaBarriers) throws Exception {
        return DeviceApi.of(comm).create(DeviceCommRequirements.builder().lsaBarrierCount(lsaBarriers).build()).get(30, TimeUnit.SECONDS);
    }

    static Window window(long bytes) throws Exception {
        OneSided rma = OneSided.of(comm);
        return rma.register(rma.allocate(bytes), WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
    }

    @Test
    void propertiesComeFromTheLibrary() throws Exception {
        DeviceProperties p = DeviceApi.of(comm).properties().get(30, TimeUnit.SECONDS);
        assertTrue(p.queried());
        assertEquals(true, p.deviceApiSupport().orElseThrow());
        assertEquals(false, p.multimemSupport().orElseThrow());
        assertEquals(GinType.NONE, p.ginType().orElseThrow());
        assertEquals(1, p.lsaTeamCount().getAsInt());
        assertEquals(1, p.size());
        assertSame(DeviceApi.of(comm).properties(), DeviceApi.of(comm).properties(), "asked once");
    }

    @Test
    void requirementsTheCommunicatorCannotMeetAreRefusedBeforeCreation() throws Exception {
        calls("libnccl.so.2");
        ExecutionException gin = assertThrows(ExecutionException.class, () -> DeviceApi.of(comm)
                .create(DeviceCommRequirements.builder().ginSignalCount(2).build()).get(30, TimeUnit.SECONDS));
        assertTrue(cause(gin) instanceof UnsupportedFeatureException, gin.toString());
        ExecutionException multimem = assertThrows(ExecutionException.class, () -> DeviceApi.of(comm)
                .create(DeviceCommRequirements.builder().lsaMultimem(true).build()).get(30, TimeUnit.SECONDS));
        assertTrue(cause(multimem).getMessage().contains("multimem"), multimem.toString());
        assertEquals(0, count(calls("libnccl.so.2"), "ncclDevCommCreate"), "nothing was created");
        assertThrows(InvalidArgumentException.class, () -> DeviceCommRequirements.builder().lsaBarrierCount(-1).build());
        assertThrows(InvalidArgumentException.class, () -> DeviceCommRequirements.builder().lsaLowLatencyAllToAll(4, 0).build());
        assertThrows(InvalidArgumentException.class, () -> DeviceCommRequirements.builder().ginContextCount(0).build());
    }

    @Test
    void aDeviceCommunicatorIsDestroyedOnceAndRefusesLaterLaunches() throws Exception {
        calls("libnccl.so.2");
        DeviceComm d = deviceComm(4);
        assertEquals(0, d.rank());
        assertEquals(1, d.size());
        assertEquals(0, d.lsaRank());
        assertEquals(1, d.lsaSize());
        assertEquals(4, d.ginContextCount());
        assertEquals(224, d.bytes().length, "sizeof(ncclDevComm) of NCCL 2.29");
        assertEquals(1, count(calls("libnccl.so.2"), "ncclDevCommCreate"));
        var destroyed = d.closeAsync();
        assertSame(destroyed, d.closeAsync(), "idempotent");
        destroyed.get(30, TimeUnit.SECONDS);
        d.close();
        assertEquals(1, count(calls("libnccl.so.2"), "ncclDevCommDestroy"));
        Window w = window(4096);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelImage.ptx(FILL))) {
            calls("libcuda.so.1");
            assertThrows(InvalidUsageException.class, () -> DeviceApi.of(comm).launch(library.kernel("fill"), LaunchConfig.of(1, 32),
                    KernelArgs.create().window(w).deviceComm(d).float32(1f).int64(16)));
            assertEquals(0, count(calls("libcuda.so.1"), "cuLaunchKernel"));
        } finally {
            w.closeAsync().get(30, TimeUnit.SECONDS);
            w.buffer().close();
        }
    }

    @Test
    void sourceIsCompiledWithTheIncludeSetupAndCached() throws Exception {
        calls("libnvrtc.so.13");
        KernelSource source = KernelSource.of("fill.cu", FILL + "// " + System.nanoTime()).withOptions("-DBLOCK=256");
        KernelImage image = KernelCompiler.of(backend).compile(source, 0);
        assertEquals(KernelImage.Format.CUBIN, image.format());
        List<String> log = calls("libnvrtc.so.13");
        String options = log.stream().filter(l -> l.startsWith("nvrtcCompileProgram")).findFirst().orElseThrow();
        for (String o : List.of("--std=c++17", "-arch=sm_90", "-default-device", "-DNCCL_GIN_PROXY_ENABLE=0", "-DBLOCK=256")) {
            assertTrue(options.contains(o), o + " in " + options);
        }
        String headers = log.stream().filter(l -> l.startsWith("nvrtcCreateProgram")).findFirst().orElseThrow();
        assertTrue(headers.contains("stdint.h") && headers.contains("linux/types.h"), headers);
        String compiled = new String(image.bytes());
        assertTrue(compiled.contains("#define __host__") && compiled.contains("#line 1 \"fill.cu\""), "prelude, then the source's own lines");

        assertEquals(image, KernelCompiler.of(backend).compile(source, 0));
        assertEquals(0, count(calls("libnvrtc.so.13"), "nvrtcCompileProgram"), "the second compile is a cache hit");
        try (var files = Files.list(StubBackend.dir().resolve("cache"))) {
            assertTrue(files.anyMatch(f -> f.toString().endsWith(".cubin")), "kept on disk for the next start");
        }
        assertEquals(KernelImage.Format.PTX, KernelCompiler.of(backend).compilePtx(source, 0).format());
        assertTrue(calls("libnvrtc.so.13").stream().anyMatch(l -> l.contains("-arch=compute_90")));

        KernelCompileException e = assertThrows(KernelCompileException.class,
                () -> KernelCompiler.of(backend).compile(KernelSource.of("broken.cu", "#error expected a ';'\n"), 0));
        assertTrue(e.log().contains("expected a ';'"), e.log());
    }

    @Test
    void argumentsAreCheckedThenMarshalledInParameterOrder() throws Exception {
        DeviceComm d = deviceComm(2);
        Window w = window(4096);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelImage.ptx(FILL))) {
            Kernel fill = library.kernel("fill");
            assertEquals(4, fill.parameterCount().getAsInt());
            DeviceApi api = DeviceApi.of(comm);
            calls("libcuda.so.1");
            assertThrows(InvalidArgumentException.class, () -> api.launch(fill, LaunchConfig.of(1, 32),
                    KernelArgs.create().window(w).deviceComm(d).float32(1f)), "three arguments for four parameters");
            InvalidArgumentException size = assertThrows(InvalidArgumentException.class, () -> api.launch(fill, LaunchConfig.of(1, 32),
                    KernelArgs.create().window(w).deviceComm(d).float64(1).int64(16)));
            assertTrue(size.getMessage().contains("parameter 2 is 4 bytes"), size.getMessage());
            assertThrows(InvalidArgumentException.class, () -> api.launch(fill, LaunchConfig.of(1, 32).withSharedBytes(65536),
                    KernelArgs.create().window(w).deviceComm(d).float32(1f).int64(16)));
            assertEquals(0, count(calls("libcuda.so.1"), "cuLaunchKernel"), "nothing enqueued for bad input");

            api.launch(fill, new LaunchConfig(3, 2, 1, 64, 2, 1, 1024),
                    KernelArgs.create().window(w).deviceComm(d).float32(1.5f).int64(1 << 20)).get(30, TimeUnit.SECONDS);
            String launch = calls("libcuda.so.1").stream().filter(l -> l.startsWith("cuLaunchKernel")).findFirst().orElseThrow();
            assertTrue(launch.contains("grid=3,2,1 block=64,2,1 shared=1024"), launch);
            String[] params = launch.substring(launch.indexOf("params=") + 7).split(",");
            assertEquals(4, params.length);
            assertEquals(w.handle(), ByteBuffer.wrap(HexFormat.of().parseHex(params[0])).order(ByteOrder.nativeOrder()).getLong());
            assertEquals(HexFormat.of().formatHex(d.bytes()), params[1], "the device communicator by value");
            assertEquals(1.5f, ByteBuffer.wrap(HexFormat.of().parseHex(params[2])).order(ByteOrder.nativeOrder()).getFloat());
            assertEquals(1L << 20, ByteBuffer.wrap(HexFormat.of().parseHex(params[3])).order(ByteOrder.nativeOrder()).getLong());
        } finally {
            d.closeAsync().get(30, TimeUnit.SECONDS);
            w.closeAsync().get(30, TimeUnit.SECONDS);
            w.buffer().close();
        }
    }

    @Test
    void aLibraryUnloadsOnceAfterItsLaunchesAndThenRefusesMore() throws Exception {
        KernelLibrary library = KernelLibrary.load(backend, KernelImage.ptx("kernel tick 4\n"));
        Kernel tick = library.kernel("tick");
        calls("libcuda.so.1");
        DeviceApi.of(comm).launch(tick, LaunchConfig.of(1, 1), KernelArgs.create().int32(7));
        library.close();
        library.close();
        library.unloaded().get(30, TimeUnit.SECONDS);
        List<String> log = calls("libcuda.so.1");
        assertEquals(1, count(log, "cuLibraryUnload"));
        assertTrue(log.indexOf(log.stream().filter(l -> l.startsWith("cuLaunchKernel")).findFirst().orElseThrow())
                < log.indexOf(log.stream().filter(l -> l.startsWith("cuLibraryUnload")).findFirst().orElseThrow()));
        assertTrue(library.isClosed());
        assertThrows(InvalidUsageException.class, () -> DeviceApi.of(comm).launch(tick, LaunchConfig.of(1, 1), KernelArgs.create().int32(7)));
        assertEquals(0, count(calls("libcuda.so.1"), "cuLaunchKernel"));
    }

    @Test
    void aPreparedLaunchRunsOnEveryReplayOfItsStepAndHoldsItsLibraryUntilClosed() throws Exception {
        KernelLibrary library = KernelLibrary.load(backend, KernelImage.ptx("kernel tick 4\n"));
        Kernel tick = library.kernel("tick");
        DeviceApi api = DeviceApi.of(comm);
        calls("libcuda.so.1");
        KernelLaunch launch = api.prepare(tick, LaunchConfig.of(2, 32), KernelArgs.create().int32(7));
        assertEquals(0, count(calls("libcuda.so.1"), "cuLaunchKernel"), "preparing enqueues nothing");
        // The stub runtime cannot capture graphs: a re-issued step enqueues the same operation on every replay.
        Step step = Step.builder(comm).add(launch.operation()).buildReissued().get(30, TimeUnit.SECONDS);
        for (int i = 0; i < 3; i++) step.replay().get(30, TimeUnit.SECONDS);
        List<String> launches = calls("libcuda.so.1").stream().filter(l -> l.startsWith("cuLaunchKernel")).toList();
        assertEquals(3, launches.size(), launches.toString());
        assertTrue(launches.get(0).contains("grid=2,1,1 block=32,1,1"), launches.get(0));
        library.close();
        step.close();
        assertTrue(!library.unloaded().isDone(), "the prepared launch still holds the library");
        launch.close();
        launch.close();
        library.unloaded().get(30, TimeUnit.SECONDS);
        assertEquals(1, count(calls("libcuda.so.1"), "cuLibraryUnload"));
        assertThrows(InvalidUsageException.class, () -> api.prepare(tick, LaunchConfig.of(1, 1), KernelArgs.create().int32(7)),
                "a closed library prepares nothing");
    }

    @Test
    void aStepHoldsTheWindowAndDeviceCommunicatorOfItsLaunchUntilClosed() throws Exception {
        DeviceComm d = deviceComm(1);
        Window w = window(4096);
        try (KernelLibrary library = KernelLibrary.load(backend, KernelImage.ptx(FILL))) {
            DeviceApi api = DeviceApi.of(comm);
            Kernel fill = library.kernel("fill");
            assertThrows(InvalidArgumentException.class, () -> api.prepare(fill, LaunchConfig.of(1, 32), KernelArgs.create().window(w)),
                    "arguments are checked as launch checks them");
            KernelLaunch launch = api.prepare(fill, LaunchConfig.of(1, 32), KernelArgs.create().window(w).deviceComm(d).float32(1f).int64(16));
            Step step = Step.builder(comm).add(launch.operation()).buildReissued().get(30, TimeUnit.SECONDS);
            calls("libnccl.so.2");
            calls("libcuda.so.1");
            CompletableFuture<Void> destroyed = d.closeAsync();
            CompletableFuture<Void> deregistered = w.closeAsync();
            assertThrows(InvalidUsageException.class, () -> api.prepare(fill, LaunchConfig.of(1, 32),
                    KernelArgs.create().window(w).deviceComm(d).float32(1f).int64(16)), "closed: nothing new uses them");
            step.replay().get(30, TimeUnit.SECONDS); // the step's launch still runs: the step holds both
            assertEquals(1, count(calls("libcuda.so.1"), "cuLaunchKernel"));
            assertFalse(destroyed.isDone() || deregistered.isDone(), "released under a step");
            assertEquals(0, count(calls("libnccl.so.2"), "ncclDevCommDestroy"));
            step.close();
            launch.close();
            destroyed.get(30, TimeUnit.SECONDS);
            deregistered.get(30, TimeUnit.SECONDS);
            List<String> nccl = calls("libnccl.so.2");
            assertEquals(1, count(nccl, "ncclDevCommDestroy"), nccl.toString());
            assertEquals(1, count(nccl, "ncclCommWindowDeregister"), nccl.toString());
        } finally {
            d.closeAsync().get(30, TimeUnit.SECONDS);
            w.closeAsync().get(30, TimeUnit.SECONDS);
            w.buffer().close();
        }
    }
}
