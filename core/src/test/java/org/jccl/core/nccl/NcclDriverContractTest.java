package org.jccl.core.nccl;

import static org.jccl.core.nccl.StubLibraries.field;
import static org.jccl.core.nccl.StubLibraries.pointer;
import static org.jccl.core.nccl.StubLibraries.single;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommMemoryStats;
import org.jccl.core.DataType;
import org.jccl.core.DeviceInfo;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.TestAccess;
import org.jccl.core.error.GpuRuntimeException;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.error.SystemErrorException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The driver against a stub NCCL 2.28.9 and CUDA runtime that log every call: each argument arrives as meant. */
class NcclDriverContractTest {
    @TempDir
    static Path dir;
    static StubLibraries stubs;
    static NcclDriver driver;
    static DriverStream stream;

    @BeforeAll
    static void build() {
        stubs = StubLibraries.build(dir, 22809, false);
        driver = stubs.open();
        stream = driver.createStream(0);
    }

    @AfterAll
    static void close() {
        stream.destroy();
    }

    @BeforeEach
    void forgetEarlierCalls() {
        stubs.ncclCalls();
        stubs.runtimeCalls();
    }

    @Test
    void describesTheLoadedLibrariesAndTheirFeatures() {
        assertEquals(22809, driver.version());
        assertTrue(driver.describe().contains("NCCL 2.28.9 (" + stubs.nccl + ")"), driver.describe());
        assertTrue(driver.describe().contains("CUDA runtime 13000"), driver.describe());
        assertTrue(driver.features().has(Feature.COMM_SHRINK));
        assertTrue(driver.features().has(Feature.ALL_TO_ALL));
        assertTrue(!driver.features().has(Feature.PUT_SIGNAL), "the stub has no ncclPutSignal");
        assertEquals("stub error string 4", driver.resultString(4));
        assertNull(driver.rejects(DataType.FLOAT8_E5M2, ReduceOp.MAX.code(), 2), "NCCL 2.28 on compute capability 9.0 has fp8");
        String oneRankAvg = driver.rejects(DataType.FLOAT8_E4M3, ReduceOp.AVG.code(), 1);
        assertTrue(oneRankAvg != null && oneRankAvg.contains("one-rank"), String.valueOf(oneRankAvg));
        assertNull(driver.rejects(DataType.FLOAT8_E4M3, ReduceOp.AVG.code(), 2), "two ranks take fp8 avg");
        assertNull(driver.rejects(DataType.FLOAT8_E4M3, ReduceOp.SUM.code(), 1), "one rank takes fp8 sum");
        assertNull(driver.rejects(DataType.FLOAT16, ReduceOp.AVG.code(), 1), "one rank takes float16 avg");
        assertTrue(driver.rejects(DataType.FLOAT8_E5M2, 5, 1) != null, "a PreMulSum (the first user code) of fp8 on one rank");
    }

    @Test
    void devicePropertiesComeFromTheRuntime() {
        assertEquals(2, driver.deviceCount());
        DeviceInfo info = driver.deviceInfo(1);
        assertEquals(new DeviceInfo(1, "Stub GPU 1", (80L << 30) + 1, 9, 0, 133, "0000:11:00.0"), info);
        assertThrows(InvalidArgumentException.class, () -> driver.deviceInfo(2));
    }

    @Test
    void memoryIsAllocatedCopiedAndFreedWithTheMatchingCalls() {
        MemoryBlock device = driver.allocate(1, 64, MemoryKind.DEVICE);
        String malloc = single(stubs.runtimeCalls(), "cudaMalloc");
        assertEquals("64", field(malloc, "bytes"));
        assertEquals("1", field(malloc, "device"));
        assertEquals(pointer(device.address()), field(malloc, "ptr"));

        ByteBuffer heap = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        heap.position(2);
        driver.write(device, 10, heap);
        assertEquals(2, heap.position(), "the source's position is left alone");
        String copy = single(stubs.runtimeCalls(), "cudaMemcpy ");
        assertEquals(pointer(device.address() + 10), field(copy, "dst"));
        assertEquals("6", field(copy, "bytes"));
        assertEquals("4", field(copy, "kind"));

        ByteBuffer back = ByteBuffer.allocateDirect(6);
        driver.read(device, 10, back);
        String readCopy = single(stubs.runtimeCalls(), "cudaMemcpy ");
        assertEquals(pointer(device.address() + 10), field(readCopy, "src"));
        byte[] got = new byte[6];
        back.get(0, got);
        assertArrayEquals(new byte[] {3, 4, 5, 6, 7, 8}, got);

        ByteBuffer direct = ByteBuffer.allocateDirect(8);
        direct.put(new byte[] {9, 9, 9, 21, 22, 23, 9, 9}).position(3).limit(6);
        driver.write(device, 0, direct);
        assertEquals(pointer(device.address()), field(single(stubs.runtimeCalls(), "cudaMemcpy "), "dst"));
        ByteBuffer directBack = ByteBuffer.allocateDirect(5);
        directBack.position(2);
        driver.read(device, 0, directBack);
        assertEquals(List.of(0, 0, 21, 22, 23), List.of(directBack.get(0) + 0, directBack.get(1) + 0, directBack.get(2) + 0,
                directBack.get(3) + 0, directBack.get(4) + 0), "copied at the buffers' positions");
        stubs.runtimeCalls();

        byte[] heapBack = new byte[6];
        driver.read(device, 10, ByteBuffer.wrap(heapBack));
        assertArrayEquals(new byte[] {3, 4, 5, 6, 7, 8}, heapBack);
        assertThrows(InvalidArgumentException.class, () -> driver.write(device, 60, ByteBuffer.allocate(8)));

        device.release();
        assertEquals(pointer(device.address()), field(single(stubs.runtimeCalls(), "cudaFree"), "ptr"));
    }

    @Test
    void pinnedAndCommunicationMemory() {
        MemoryBlock pinned = driver.allocate(0, 16, MemoryKind.PINNED_HOST);
        assertEquals("0", field(single(stubs.runtimeCalls(), "cudaHostAlloc"), "flags"));
        ByteBuffer view = pinned.hostView();
        view.putInt(4, 0x01020304);
        ByteBuffer read = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        driver.read(pinned, 4, read);
        assertEquals(0x01020304, read.getInt(0));
        pinned.release();
        assertEquals(pointer(pinned.address()), field(single(stubs.runtimeCalls(), "cudaFreeHost"), "ptr"));

        MemoryBlock comm = driver.allocate(0, 4096, MemoryKind.COMMUNICATION);
        assertNull(comm.hostView());
        assertEquals("4096", field(single(stubs.ncclCalls(), "ncclMemAlloc"), "bytes"));
        comm.release();
        assertEquals(pointer(comm.address()), field(single(stubs.ncclCalls(), "ncclMemFree"), "ptr"));
    }

    @Test
    void streamsAndEvents() {
        DriverStream s = driver.createStream(1);
        String created = single(stubs.runtimeCalls(), "cudaStreamCreateWithFlags");
        assertEquals("1", field(created, "flags"));
        assertEquals(pointer(s.handle()), field(created, "stream"));

        DriverEvent untimed = driver.createEvent(0, false);
        assertEquals("2", field(single(stubs.runtimeCalls(), "cudaEventCreateWithFlags"), "flags"));
        DriverEvent timed = driver.createEvent(0, true);
        assertEquals("0", field(single(stubs.runtimeCalls(), "cudaEventCreateWithFlags"), "flags"));

        untimed.record(s);
        String record = single(stubs.runtimeCalls(), "cudaEventRecord");
        assertEquals(pointer(untimed.handle()), field(record, "event"));
        assertEquals(pointer(s.handle()), field(record, "stream"));
        s.waitEvent(timed);
        String wait = single(stubs.runtimeCalls(), "cudaStreamWaitEvent");
        assertEquals(pointer(s.handle()), field(wait, "stream"));
        assertEquals(pointer(timed.handle()), field(wait, "event"));
        assertEquals(1.5f, timed.elapsedMillisSince(driver.createEvent(0, true)));
        assertThrows(InvalidUsageException.class, () -> untimed.elapsedMillisSince(timed));

        DriverStream foreign = driver.wrapStream(0, 0x5000);
        foreign.destroy();
        s.destroy();
        assertEquals(List.of("cudaStreamDestroy stream=" + pointer(s.handle())),
                stubs.runtimeCalls().stream().filter(l -> l.startsWith("cudaStreamDestroy")).toList(),
                "the wrapped stream is left alone");
        untimed.destroy();
        timed.destroy();
    }

    @Test
    void pollEventsQueriesEveryEventInOneBatch() {
        // The stub's event ids cycle through done (id % 3 == 1), not ready (2) and error 700 (0).
        DriverEvent[] events = new DriverEvent[6];
        int[] ids = new int[6];
        for (int i = 0; i < events.length; i++) {
            events[i] = driver.createEvent(0, false);
            ids[i] = Integer.parseInt(field(single(stubs.runtimeCalls(), "cudaEventCreateWithFlags"), "id"));
        }
        int[] status = new int[8];
        driver.pollEvents(events, 6, status);
        for (int i = 0; i < 6; i++) {
            int expected = ids[i] % 3 == 1 ? DriverConstants.EVENT_DONE : ids[i] % 3 == 2 ? DriverConstants.EVENT_PENDING : 700;
            assertEquals(expected, status[i], "event id " + ids[i]);
        }
        assertEquals(0, status[6], "nothing written past n");
        assertEquals(6, stubs.runtimeCalls().stream().filter(l -> l.startsWith("cudaEventQuery")).count());
        assertEquals("stub cuda error 700", driver.runtimeErrorString(700));
        for (int i = 0; i < 6; i++) {
            if (ids[i] % 3 == 0) {
                DriverEvent failing = events[i];
                GpuRuntimeException e = assertThrows(GpuRuntimeException.class, failing::query);
                assertEquals(700, e.resultCode());
                assertEquals("stub cuda error 700", e.libraryMessage());
            }
            events[i].destroy();
        }
    }

    @Test
    void oneEventIsPolledAsInABatch() {
        // One busy stream is polled without the batch's arrays; each outcome must read as it does in a batch.
        for (int i = 0; i < 3; i++) {
            DriverEvent event = driver.createEvent(0, false);
            int id = Integer.parseInt(field(single(stubs.runtimeCalls(), "cudaEventCreateWithFlags"), "id"));
            int[] status = new int[2];
            driver.pollEvents(new DriverEvent[] {event}, 1, status);
            int expected = id % 3 == 1 ? DriverConstants.EVENT_DONE : id % 3 == 2 ? DriverConstants.EVENT_PENDING : 700;
            assertEquals(expected, status[0], "event id " + id);
            assertEquals(0, status[1], "nothing written past n");
            assertEquals(1, stubs.runtimeCalls().stream().filter(l -> l.startsWith("cudaEventQuery")).count());
            event.destroy();
        }
    }

    @Test
    void onlyABlockingCommunicatorsAsyncErrorMayBeQueriedDuringALaunch() {
        assumeTrue(System.getenv("NCCL_COMM_BLOCKING") == null, "NCCL_COMM_BLOCKING decides for an unset configuration");
        DriverComm blocking = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        DriverComm nonBlocking = driver.initRank(2, driver.newUniqueId(), 1, 0, CommConfig.builder().blocking(false).build());
        assertTrue(blocking.asyncErrorSafeDuringLaunch(), "a blocking communicator has no group job to complete");
        assertFalse(nonBlocking.asyncErrorSafeDuringLaunch(), "a non-blocking one's query may wait for its group job");
        blocking.destroy();
        nonBlocking.destroy();
        stubs.ncclCalls();
        stubs.runtimeCalls();
    }

    @Test
    void uniqueIdAndInitRankPassTheBytesAndTheConfig() {
        byte[] id = driver.newUniqueId();
        for (int i = 0; i < 128; i++) assertEquals((byte) (i * 7 + 1), id[i]);
        id[0] = 42;
        CommConfig config = CommConfig.builder().name("jccl-test").set(org.jccl.core.ConfigField.MAX_CTAS, 16).build();
        DriverComm comm = driver.initRank(4, id, 2, 1, config);
        List<String> calls = stubs.ncclCalls();
        String init = calls.stream().filter(l -> l.startsWith("ncclCommInitRankConfig nranks")).findFirst().orElseThrow();
        assertEquals("4", field(init, "nranks"));
        assertEquals("2", field(init, "rank"));
        assertEquals(HexFormat.of().formatHex(id), field(init, "id"));
        String cfg = calls.stream().filter(l -> l.startsWith("ncclCommInitRankConfig config")).findFirst().orElseThrow();
        assertEquals("jccl-test", field(cfg, "commName"));
        byte[] bytes = HexFormat.of().parseHex(field(cfg, "config"));
        ExpectedConfig.check(bytes, 22809, 80);
        assertEquals(16, ExpectedConfig.intAt(bytes, 28), "maxCTAs");
        assertEquals(Integer.MIN_VALUE, ExpectedConfig.intAt(bytes, 16), "blocking unset");
        assertEquals(List.of("cudaSetDevice device=1", "cudaSetDevice device=0"),
                stubs.runtimeCalls().stream().filter(l -> l.startsWith("cudaSetDevice")).toList(),
                "created on its device, the caller's device restored");
        assertEquals(2, comm.rank());
        assertEquals(4, comm.size());
        assertEquals(1, comm.device());
        comm.destroy();
        assertEquals(1, stubs.ncclCalls().stream().filter(l -> l.startsWith("ncclCommDestroy")).count());
    }

    @Test
    void defaultConfigPassesNull() {
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        assertEquals("null", field(single(stubs.ncclCalls(), "ncclCommInitRankConfig config"), "config"));
        comm.destroy();
    }

    @Test
    void everyOperationReachesItsFunctionWithItsArguments() {
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 1, 0, CommConfig.DEFAULT);
        long c = ((NcclComm) comm).handle();
        Buffer a = TestAccess.buffer(driver, driver.allocate(0, 256, MemoryKind.DEVICE));
        Buffer b = TestAccess.buffer(driver, driver.allocate(0, 256, MemoryKind.DEVICE));
        Buffer bias = TestAccess.buffer(driver, driver.allocate(0, 256, MemoryKind.DEVICE));
        stubs.ncclCalls();
        String tail = " comm=" + pointer(c) + " stream=" + pointer(stream.handle());
        String sa = pointer(a.address());
        String rb = pointer(b.address());

        expect(comm, Operation.allReduce(a, b, 7, DataType.FLOAT32, ReduceOp.MAX),
                "ncclAllReduce send=" + sa + " recv=" + rb + " count=7 type=7 op=2" + tail);
        expect(comm, Operation.broadcast(a, b, 5, DataType.INT64, 1),
                "ncclBroadcast send=" + sa + " recv=" + rb + " count=5 type=4 root=1" + tail);
        expect(comm, Operation.reduce(a, b, 3, DataType.BFLOAT16, ReduceOp.AVG, 0),
                "ncclReduce send=" + sa + " recv=" + rb + " count=3 type=9 op=4 root=0" + tail);
        expect(comm, Operation.allGather(a, b, 4, DataType.UINT8),
                "ncclAllGather send=" + sa + " recv=" + rb + " count=4 type=1" + tail);
        expect(comm, Operation.reduceScatter(a, b, 6, DataType.FLOAT16, ReduceOp.PROD),
                "ncclReduceScatter send=" + sa + " recv=" + rb + " count=6 type=6 op=1" + tail);
        expect(comm, Operation.gather(a, b, 2, DataType.INT32, 1),
                "ncclGather send=" + sa + " recv=" + rb + " count=2 type=2 root=1" + tail);
        expect(comm, Operation.scatter(a, b, 9, DataType.UINT64, 0),
                "ncclScatter send=" + sa + " recv=" + rb + " count=9 type=5 root=0" + tail);
        expect(comm, Operation.allToAll(a, b, 8, DataType.FLOAT8_E4M3),
                "ncclAlltoAll send=" + sa + " recv=" + rb + " count=8 type=10" + tail);
        expect(comm, Operation.allToAllv(a, new long[] {1, 2}, new long[] {0, 1}, b, new long[] {3, 4}, new long[] {0, 3},
                DataType.FLOAT64), "ncclAlltoAllv send=" + sa + " recv=" + rb + " counts=1/0/3/0,2/1/4/3 type=8" + tail);
        expect(comm, Operation.allReduceWithBias(a, b, 11, DataType.FLOAT32, ReduceOp.SUM, bias),
                "ncclAllReduceWithBias send=" + sa + " recv=" + rb + " count=11 type=7 op=0" + tail + " bias=" + pointer(bias.address()));
        expect(comm, Operation.send(a, 12, DataType.UINT32, 0), "ncclSend send=" + sa + " count=12 type=3 peer=0" + tail);
        expect(comm, Operation.recv(b, 13, DataType.FLOAT8_E5M2, 0), "ncclRecv recv=" + rb + " count=13 type=11 peer=0" + tail);
        expect(comm, Operation.allReduce(a.slice(8, 16), a.slice(8, 16), 4, DataType.INT8, ReduceOp.MIN),
                "ncclAllReduce send=" + pointer(a.address() + 8) + " recv=" + pointer(a.address() + 8) + " count=4 type=0 op=3" + tail);
        a.close();
        b.close();
        bias.close();
        comm.destroy();
    }

    private static void expect(DriverComm comm, Operation op, String line) {
        driver.launch(comm, TestAccess.lower(op), stream);
        assertEquals(List.of(line), stubs.ncclCalls(), op.describe());
    }

    @Test
    void failedCallsBecomeTypedExceptionsWithTheLibrarysTexts() {
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        Buffer a = TestAccess.buffer(driver, driver.allocate(0, 8192, MemoryKind.DEVICE));
        assertFailure(comm, a, 1004, InvalidArgumentException.class);
        assertFailure(comm, a, 1005, InvalidUsageException.class);
        assertFailure(comm, a, 1006, RemoteErrorException.class);
        assertFailure(comm, a, 1002, SystemErrorException.class);
        assertFailure(comm, a, 1001, GpuRuntimeException.class);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> driver.initRank(2, driver.newUniqueId(), 99, 0, CommConfig.DEFAULT));
        assertEquals(4, e.resultCode());
        assertTrue(e.getMessage().contains("ncclCommInitRankConfig"), e.getMessage());
        a.close();
        comm.destroy();
    }

    private static void assertFailure(DriverComm comm, Buffer a, long count, Class<? extends JcclException> type) {
        JcclException e = assertThrows(type, () -> driver.launch(comm, TestAccess.lower(Operation.allReduce(a, a, count, DataType.INT8, ReduceOp.SUM)), stream));
        assertEquals((int) (count - 1000), e.resultCode());
        assertEquals("stub error string " + (count - 1000), e.libraryMessage());
        assertEquals("stub last error", e.lastError());
    }

    @Test
    void nonBlockingCallsArePolledUntilDone() {
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.builder().blocking(false).build());
        List<String> init = stubs.ncclCalls();
        assertEquals("00000000", field(single(init, "ncclCommInitRankConfig config"), "config").substring(32, 40), "blocking=0");
        assertEquals(7, comm.asyncError(), "creation still in progress");
        assertEquals(7, comm.asyncError());
        assertEquals(0, comm.asyncError());
        stubs.ncclCalls();

        Buffer a = TestAccess.buffer(driver, driver.allocate(0, 64, MemoryKind.DEVICE));
        driver.launch(comm, TestAccess.lower(Operation.allReduce(a, a, 4, DataType.FLOAT32, ReduceOp.SUM)), stream);
        List<String> calls = stubs.ncclCalls();
        assertEquals(List.of("pending=2", "pending=1", "pending=0"),
                calls.stream().filter(l -> l.startsWith("ncclCommGetAsyncError")).map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList(),
                "launch returns only when the communicator is no longer in progress");

        driver.groupStart();
        driver.launch(comm, TestAccess.lower(Operation.send(a, 4, DataType.FLOAT32, 1)), stream);
        driver.launch(comm, TestAccess.lower(Operation.recv(a, 4, DataType.FLOAT32, 1)), stream);
        assertTrue(stubs.ncclCalls().stream().noneMatch(l -> l.startsWith("ncclCommGetAsyncError")), "no polling inside a group");
        driver.groupEnd();
        assertEquals(3, stubs.ncclCalls().stream().filter(l -> l.startsWith("ncclCommGetAsyncError")).count(),
                "groupEnd polls until done");
        a.close();
        comm.destroy();
    }

    @Test
    void initAllSplitShrinkRegisterAndLifecycle() {
        List<DriverComm> comms = driver.initAll(new int[] {1, 0});
        assertEquals(List.of("ncclCommInitAll ndev=2 device[0]=1", "ncclCommInitAll ndev=2 device[1]=0"), stubs.ncclCalls());
        DriverComm first = comms.get(0);
        assertEquals(0, first.rank());
        assertEquals(1, first.device());
        assertEquals(0, comms.get(1).device());

        assertNull(first.split(DriverConstants.SPLIT_NO_COLOR, 3, CommConfig.DEFAULT));
        assertEquals("-1", field(single(stubs.ncclCalls(), "ncclCommSplit comm"), "color"));
        DriverComm child = first.split(5, 0, CommConfig.DEFAULT);
        List<String> split = stubs.ncclCalls();
        assertEquals("5", field(single(split, "ncclCommSplit comm"), "color"));
        assertEquals("null", field(single(split, "ncclCommSplit config"), "config"), "the default config inherits the parent's");
        assertEquals(1, child.size());

        DriverComm shrunk = first.shrink(new int[] {1}, CommConfig.DEFAULT);
        String shrink = single(stubs.ncclCalls(), "ncclCommShrink comm");
        assertEquals("1", field(shrink, "excluded"));
        assertEquals("0", field(shrink, "flags"), "NCCL_SHRINK_DEFAULT");
        assertEquals(1, shrunk.size());

        MemoryBlock block = driver.allocate(0, 128, MemoryKind.DEVICE);
        long handle = first.register(block, 32, 64);
        String reg = single(stubs.ncclCalls(), "ncclCommRegister");
        assertEquals(pointer(block.address() + 32), field(reg, "buffer"));
        assertEquals("64", field(reg, "bytes"));
        first.deregister(handle);
        assertEquals("0x1234", field(single(stubs.ncclCalls(), "ncclCommDeregister"), "handle"));
        block.release();

        first.suspend(DriverComm.SUSPEND_MEMORY);
        assertEquals("1", field(single(stubs.ncclCalls(), "ncclCommSuspend"), "flags"));
        first.resume();
        assertEquals(1, stubs.ncclCalls().size());
        assertEquals(new CommMemoryStats(1000, true, 1002, 1003), first.memStats());
        first.revoke(0);
        assertEquals("0", field(single(stubs.ncclCalls(), "ncclCommRevoke"), "flags"));

        byte[] growId = first.growUniqueId();
        assertEquals((byte) 127, growId[0]);
        DriverComm grown = first.grow(4, growId, CommConfig.DEFAULT);
        String grow = single(stubs.ncclCalls(), "ncclCommGrow comm");
        assertEquals("4", field(grow, "nranks"));
        assertEquals("-1", field(grow, "rank"));
        assertEquals(HexFormat.of().formatHex(growId), field(grow, "id"));
        assertEquals(4, grown.size());
        comms.get(1).grow(4, null, CommConfig.DEFAULT);
        assertEquals("null", field(single(stubs.ncclCalls(), "ncclCommGrow comm"), "id"), "only the id's maker passes it");
        assertThrows(InvalidArgumentException.class, () -> first.grow(2, null, CommConfig.DEFAULT));

        first.finalizeComm();
        first.abort();
        List<String> end = stubs.ncclCalls();
        assertEquals(1, end.stream().filter(l -> l.startsWith("ncclCommFinalize")).count());
        assertEquals(1, end.stream().filter(l -> l.startsWith("ncclCommAbort")).count());
        comms.get(1).destroy();
    }

    @Test
    void preMulSumPassesTheScalarInTheElementType() {
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        stubs.ncclCalls();
        int op = comm.createPreMulSum(0.5, null, 0, DataType.FLOAT16);
        String line = single(stubs.ncclCalls(), "ncclRedOpCreatePreMulSum");
        assertEquals("1", field(line, "residence"));
        assertEquals("6", field(line, "type"));
        assertEquals("0038", field(line, "scalar"), "0.5 as half: 0x3800, little-endian");
        comm.createPreMulSum(-3.0, null, 0, DataType.INT32);
        assertEquals("fdffffff", field(single(stubs.ncclCalls(), "ncclRedOpCreatePreMulSum"), "scalar"));
        comm.createPreMulSum(2.0, null, 0, DataType.FLOAT64);
        assertEquals("0000000000000040", field(single(stubs.ncclCalls(), "ncclRedOpCreatePreMulSum"), "scalar"));

        MemoryBlock scalar = driver.allocate(0, 16, MemoryKind.DEVICE);
        comm.createPreMulSum(0, scalar, 8, DataType.FLOAT32);
        String device = single(stubs.ncclCalls(), "ncclRedOpCreatePreMulSum");
        assertEquals("0", field(device, "residence"));
        assertEquals(pointer(scalar.address() + 8), field(device, "scalar"));
        comm.destroyReduceOp(op);
        assertEquals("ncclRedOpDestroy op=" + op + " comm=" + pointer(((NcclComm) comm).handle()), single(stubs.ncclCalls(), "ncclRedOpDestroy"));
        scalar.release();
        comm.destroy();
    }

    @Test
    void runtimeErrorOneIsNotMistakenForPending() {
        assertEquals(DriverConstants.EVENT_DONE, GpuRuntime.eventStatus(0));
        assertEquals(DriverConstants.EVENT_PENDING, GpuRuntime.eventStatus(600));
        assertEquals(GpuRuntime.INVALID_VALUE_STATUS, GpuRuntime.eventStatus(1));
        assertEquals("stub cuda error 1", driver.runtimeErrorString(GpuRuntime.INVALID_VALUE_STATUS));
        assertEquals(719, GpuRuntime.eventStatus(719));
    }

    @Test
    void groupSimulateEndReportsTheEstimate() {
        driver.groupStart();
        assertEquals(12.5f, driver.groupSimulateEnd());
        String line = single(stubs.ncclCalls(), "ncclGroupSimulateEnd");
        assertEquals("24", field(line, "size"));
        assertEquals("74685283", field(line, "magic"));
        assertEquals("22809", field(line, "version"));
    }

    @Test
    void initRankScalablePassesEveryId() {
        byte[] one = driver.newUniqueId();
        byte[] two = new byte[128];
        two[5] = 9;
        DriverComm comm = driver.initRankScalable(8, 3, List.of(one, two), 0, CommConfig.DEFAULT);
        String line = single(stubs.ncclCalls(), "ncclCommInitRankScalable nranks");
        assertEquals("2", field(line, "nId"));
        assertEquals(HexFormat.of().formatHex(one) + HexFormat.of().formatHex(two), field(line, "ids"));
        assertEquals(3, comm.rank());
        assertNotEquals(0L, ((NcclComm) comm).handle());
        comm.destroy();
    }
}
