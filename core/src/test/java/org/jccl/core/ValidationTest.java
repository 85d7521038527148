package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad calls throw before anything is enqueued, and leave nothing behind. */
class ValidationTest {
    private ScriptedDriver driver;
    private Backend backend;
    private List<Communicator> comms;
    private Communicator c;
    private Buffer a;
    private Buffer b;

    @BeforeEach
    void setUp() {
        driver = new ScriptedDriver();
        backend = new Backend(driver);
        comms = backend.initAll(new int[] {-1, -1, -1, -1}, CommOptions.defaults()).join();
        c = comms.get(1);
        a = backend.allocate(-1, 1024);
        b = backend.allocate(-1, 1024);
    }

    @AfterEach
    void tearDown() {
        driver.autoComplete = true;
        driver.done.addAll(driver.events.keySet());
        for (Communicator x : comms) x.close();
        a.close();
        b.close();
    }

    private void rejected(String fragment, Executable call) {
        int launchedBefore = driver.launched.size();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertTrue(e.getMessage().startsWith(c.describe()), e.getMessage());
        assertEquals(launchedBefore, driver.launched.size(), "nothing was launched");
        assertTrue(c.pendingCount() == 0, "nothing is pending");
    }

    /** The call is accepted; waits until it has launched and completed, so later checks start from nothing pending. */
    private void accepted(Executable call) {
        int launchedBefore = driver.launched.size();
        assertDoesNotThrow(call);
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            driver.done.addAll(driver.events.keySet());
            return driver.launched.size() > launchedBefore && c.pendingCount() == 0;
        });
    }

    private Operation op(OpKind kind, Buffer send, Buffer recv, long count, int root) {
        return new Operation(kind, send, recv, count, DataType.FLOAT32, kind.reduces() ? ReduceOp.SUM : null, root, null, null);
    }

    @Test
    void countBeyondCapacity() {
        rejected("send buffer holds 1024 bytes; the operation needs 1028", () -> c.allReduce(a, b, 257, DataType.FLOAT32, ReduceOp.SUM));
        rejected("recv buffer holds 1024 bytes", () -> c.allGather(a, b, 65, DataType.FLOAT32));
        rejected("send buffer holds 1024 bytes", () -> c.reduceScatter(a, b, 65, DataType.FLOAT32, ReduceOp.SUM));
        rejected("count must not be negative", () -> c.broadcast(a, b, -1, DataType.INT8, 0));
    }

    @Test
    void rootsAndPeersOutOfRange() {
        rejected("root 4 is outside 0..3", () -> c.broadcast(a, b, 4, DataType.FLOAT32, 4));
        rejected("root -1 is outside 0..3", () -> c.reduce(a, b, 4, DataType.FLOAT32, ReduceOp.SUM, -1));
        rejected("peer 7 is outside 0..3", () -> c.send(a, 4, DataType.FLOAT32, 7));
    }

    @Test
    void missingBuffersAndReductions() {
        rejected("recv buffer is required", () -> c.submit(new Operation(OpKind.ALL_REDUCE, a, null, 4, DataType.FLOAT32, ReduceOp.SUM, -1, null, null)));
        rejected("a reduction is required", () -> c.submit(new Operation(OpKind.ALL_REDUCE, a, b, 4, DataType.FLOAT32, null, -1, null, null)));
    }

    @Test
    void overlapsThatAreNotNcclsInPlaceForm() {
        rejected("send and recv overlap", () -> c.allReduce(a.slice(0, 512), a.slice(256, 512), 64, DataType.FLOAT32, ReduceOp.SUM));
        rejected("send and recv overlap", () -> c.allReduceWithBias(a.slice(0, 512), a.slice(256, 512), 64, DataType.FLOAT32, ReduceOp.SUM, b));
        // allGather in place means send == recv + rank * sendCount (rank 1, 16 floats = 64 bytes)
        rejected("NCCL's in-place form", () -> c.allGather(b.slice(0, 64), b, 16, DataType.FLOAT32));
        rejected("send and recv overlap", () -> c.allToAll(a, a, 16, DataType.FLOAT32));
        assertDoesNotThrow(() -> c.allGather(b.slice(64, 64), b, 16, DataType.FLOAT32));
        driver.done.addAll(driver.events.keySet());
    }

    @Test
    void allToAllvArraysNeedOneEntryPerRank() {
        long[] three = {1, 1, 1};
        long[] four = {1, 1, 1, 1};
        long[] displs = {0, 1, 2, 3};
        rejected("sendCounts needs 4 entries", () -> c.allToAllv(a, three, displs, b, four, displs, DataType.FLOAT32));
        rejected("recvCounts has a negative entry", () -> c.allToAllv(a, four, displs, b, new long[] {1, -1, 1, 1}, displs, DataType.FLOAT32));
        rejected("recv buffer holds 1024 bytes", () -> c.allToAllv(a, four, displs, b, four, new long[] {0, 1, 2, 300}, DataType.FLOAT32));
    }

    @Test
    void closedBuffersAndForeignPreMulSums() {
        Buffer closed = backend.allocate(-1, 64);
        closed.close();
        assertThrows(InvalidUsageException.class, () -> c.allReduce(closed, b, 4, DataType.FLOAT32, ReduceOp.SUM));
        PreMulSum other = comms.get(0).createPreMulSum(2.0, DataType.FLOAT32).join();
        InvalidUsageException e = assertThrows(InvalidUsageException.class, () -> c.allReduce(a, b, 4, DataType.FLOAT32, other));
        assertTrue(e.getMessage().contains("belongs to " + comms.get(0).describe()), e.getMessage());
        PreMulSum mine = c.createPreMulSum(2.0, DataType.FLOAT32).join();
        assertThrows(InvalidUsageException.class, () -> c.allReduce(a, b, 4, DataType.FLOAT64, mine));
        mine.close();
        assertThrows(InvalidUsageException.class, () -> c.allReduce(a, b, 4, DataType.FLOAT32, mine));
        assertTrue(driver.launched.isEmpty());
        other.close();
    }

    @Test
    void operationsTheLibraryLacksAreRefusedThroughTheCommunicator() {
        driver.unsupported.add(OpKind.GATHER);
        UnsupportedFeatureException e = assertThrows(UnsupportedFeatureException.class, () -> c.gather(a, b, 4, DataType.FLOAT32, 0));
        assertTrue(e.getMessage().contains("gather"), e.getMessage());
        assertTrue(driver.launched.isEmpty(), "nothing was launched");
        driver.rejection = "fp8 reductions need a newer GPU";
        rejected("fp8 reductions need a newer GPU", () -> c.allReduce(a, b, 4, DataType.FLOAT8_E4M3, ReduceOp.SUM));
        accepted(() -> c.broadcast(a, b, 4, DataType.FLOAT8_E4M3, 0)); // no reduction: nothing to reject
    }

    @Test
    void everyOperationChecksTheSizeOfEveryBufferItNeeds() {
        // 1024-byte buffers on 4 ranks: 256 floats, or 64 per rank for the gathering and scattering forms.
        Buffer small = a.slice(0, 1020);
        long[] counts = {64, 64, 64, 64};
        long[] displs = {0, 64, 128, 192};
        rejected("send buffer holds 1020", () -> c.allReduceWithBias(small, b, 256, DataType.FLOAT32, ReduceOp.SUM, a));
        rejected("recv buffer holds 1020", () -> c.allReduceWithBias(a, small, 256, DataType.FLOAT32, ReduceOp.SUM, b));
        rejected("bias buffer holds 1020", () -> c.allReduceWithBias(a, b, 256, DataType.FLOAT32, ReduceOp.SUM, small));
        rejected("recv buffer holds 1020", () -> c.allReduce(a, small, 256, DataType.FLOAT32, ReduceOp.SUM));
        rejected("send buffer holds 1020", () -> c.allGather(small, b, 255 + 1, DataType.FLOAT32));
        rejected("recv buffer holds 252", () -> c.reduceScatter(a, b.slice(0, 252), 64, DataType.FLOAT32, ReduceOp.SUM));
        rejected("send buffer holds 1020", () -> c.allToAll(small, b, 64, DataType.FLOAT32));
        rejected("recv buffer holds 1020", () -> c.allToAll(a, small, 64, DataType.FLOAT32));
        rejected("send buffer holds 1020", () -> c.allToAllv(small, counts, displs, b, counts, displs, DataType.FLOAT32));
        rejected("send buffer holds 1020", () -> c.send(small, 256, DataType.FLOAT32, 0));
        rejected("recv buffer holds 1020", () -> c.recv(small, 256, DataType.FLOAT32, 0));
        rejected("send buffer holds 1020", () -> c.gather(small, b, 256, DataType.FLOAT32, 0));
        rejected("recv buffer holds 1020", () -> c.scatter(a, small, 256, DataType.FLOAT32, 0));
        rejected("recv buffer holds 1020", () -> c.broadcast(a, small, 256, DataType.FLOAT32, 0));
        rejected("send buffer holds 1020", () -> c.reduce(small, b, 256, DataType.FLOAT32, ReduceOp.SUM, 0));
        // Exactly the size needed is enough.
        accepted(() -> c.allToAllv(a, counts, displs, b, counts, displs, DataType.FLOAT32));
        accepted(() -> c.allToAll(a, b, 64, DataType.FLOAT32));
        accepted(() -> c.allReduceWithBias(a, b, 256, DataType.FLOAT32, ReduceOp.SUM, a.slice(0, 1024)));
        accepted(() -> c.send(a, 256, DataType.FLOAT32, 0));
        accepted(() -> c.recv(b, 256, DataType.FLOAT32, 3));
    }

    @Test
    void theRootOfEveryRootedOperationNeedsItsBuffersWholeAndApart() {
        int me = c.rank();
        Buffer tiny = a.slice(0, 4);
        rejected("send buffer is required", () -> c.submit(op(OpKind.BROADCAST, null, b, 16, me)));
        rejected("send buffer holds 4", () -> c.broadcast(tiny, b, 16, DataType.FLOAT32, me));
        rejected("send and recv overlap", () -> c.broadcast(a.slice(0, 64), a.slice(32, 64), 16, DataType.FLOAT32, me));
        rejected("recv buffer is required", () -> c.submit(op(OpKind.REDUCE, a, null, 16, me)));
        rejected("recv buffer holds 4", () -> c.reduce(a, tiny, 16, DataType.FLOAT32, ReduceOp.SUM, me));
        rejected("send and recv overlap", () -> c.reduce(a.slice(0, 64), a.slice(32, 64), 16, DataType.FLOAT32, ReduceOp.SUM, me));
        rejected("recv buffer holds 1020", () -> c.gather(a.slice(0, 256), b.slice(0, 1020), 64, DataType.FLOAT32, me));
        rejected("NCCL's in-place form", () -> c.gather(b.slice(0, 64), b, 16, DataType.FLOAT32, me));
        rejected("send buffer holds 1020", () -> c.scatter(b.slice(0, 1020), a.slice(0, 256), 64, DataType.FLOAT32, me));
        rejected("recv buffer holds 4", () -> c.scatter(a, tiny, 16, DataType.FLOAT32, me));
        rejected("NCCL's in-place form", () -> c.scatter(a, a.slice(0, 64), 16, DataType.FLOAT32, me));
        // A block overlapping only the start of the whole buffer is no in-place form either.
        rejected("NCCL's in-place form", () -> c.gather(a.slice(0, 64), a.slice(32, 256), 16, DataType.FLOAT32, me));
        rejected("NCCL's in-place form", () -> c.scatter(a.slice(32, 256), a.slice(0, 64), 16, DataType.FLOAT32, me));
        // In place at the root: its own block of the whole buffer (rank 1, 16 floats = 64 bytes in).
        accepted(() -> c.broadcast(a, a, 16, DataType.FLOAT32, me));
        accepted(() -> c.reduce(a, a, 16, DataType.FLOAT32, ReduceOp.SUM, me));
        accepted(() -> c.gather(b.slice(64, 64), b, 16, DataType.FLOAT32, me));
        accepted(() -> c.scatter(a, a.slice(64, 64), 16, DataType.FLOAT32, me));
    }

    @Test
    void aNonRootMayOmitOrShrinkTheBuffersOnlyTheRootUses() {
        int root = 0;
        Buffer tiny = a.slice(0, 4);
        accepted(() -> c.submit(op(OpKind.BROADCAST, null, b, 16, root)));
        accepted(() -> c.broadcast(tiny, b, 16, DataType.FLOAT32, root));
        accepted(() -> c.broadcast(a.slice(0, 64), a.slice(32, 64), 16, DataType.FLOAT32, root));
        accepted(() -> c.submit(op(OpKind.REDUCE, a, null, 16, root)));
        accepted(() -> c.reduce(a, tiny, 16, DataType.FLOAT32, ReduceOp.SUM, root));
        accepted(() -> c.reduce(a.slice(0, 64), a.slice(32, 64), 16, DataType.FLOAT32, ReduceOp.SUM, root));
        accepted(() -> c.submit(op(OpKind.GATHER, a, null, 16, root)));
        accepted(() -> c.gather(a, tiny, 16, DataType.FLOAT32, root));
        accepted(() -> c.submit(op(OpKind.SCATTER, null, b, 16, root)));
        accepted(() -> c.scatter(tiny, b, 16, DataType.FLOAT32, root));
        // What a non-root does pass is still checked: open, and on the communicator's device.
        Buffer closed = backend.allocate(-1, 64);
        closed.close();
        assertThrows(InvalidUsageException.class, () -> c.broadcast(closed, b, 16, DataType.FLOAT32, root));
        assertThrows(InvalidUsageException.class, () -> c.reduce(a, closed, 16, DataType.FLOAT32, ReduceOp.SUM, root));
        try (Buffer elsewhere = backend.allocate(0, 64)) {
            rejected("send buffer " + elsewhere + " is not on device -1", () -> c.scatter(elsewhere, b, 16, DataType.FLOAT32, root));
            rejected("recv buffer " + elsewhere + " is not on device -1", () -> c.gather(a, elsewhere, 16, DataType.FLOAT32, root));
        }
    }

    @Test
    void buffersOnAnotherDeviceAreRefused() {
        try (Buffer elsewhere = backend.allocate(0, 1024)) {
            rejected("send buffer " + elsewhere + " is on device 0, the communicator on -1",
                    () -> c.allReduce(elsewhere, b, 4, DataType.FLOAT32, ReduceOp.SUM));
            rejected("recv buffer " + elsewhere + " is on device 0", () -> c.recv(elsewhere, 4, DataType.FLOAT32, 0));
        }
    }

    @Test
    void adjacentSlicesOfOneAllocationDoNotOverlap() {
        accepted(() -> c.allReduce(a.slice(0, 64), a.slice(64, 64), 16, DataType.FLOAT32, ReduceOp.SUM));
        accepted(() -> c.allReduce(a.slice(64, 64), a.slice(0, 64), 16, DataType.FLOAT32, ReduceOp.SUM));
        accepted(() -> c.allToAll(a.slice(0, 256), a.slice(256, 256), 16, DataType.FLOAT32));
        // One byte of overlap at either end is an overlap.
        rejected("send and recv overlap", () -> c.allToAll(a.slice(0, 256), a.slice(255, 256), 16, DataType.FLOAT32));
        rejected("send and recv overlap", () -> c.allToAll(a.slice(255, 256), a.slice(0, 256), 16, DataType.FLOAT32));
        // allGather's send overlapping only the start of recv, not at the in-place offset, is still an overlap.
        rejected("NCCL's in-place form", () -> c.allGather(a.slice(0, 64), a.slice(32, 256), 16, DataType.FLOAT32));
        rejected("NCCL's in-place form", () -> c.reduceScatter(a.slice(32, 256), a.slice(0, 64), 16, DataType.FLOAT32, ReduceOp.SUM));
        accepted(() -> c.reduceScatter(a.slice(0, 256), a.slice(64, 64), 16, DataType.FLOAT32, ReduceOp.SUM));
        // Nothing to move, so nothing overlaps: count 0 inside the receive buffer at any offset, empty slices anywhere.
        accepted(() -> c.allGather(b.slice(8, 64), b, 0, DataType.FLOAT32));
        accepted(() -> c.allToAll(a.slice(0, 256), a.slice(128, 0), 0, DataType.FLOAT32));
        accepted(() -> c.allToAll(a.slice(128, 0), a.slice(0, 256), 0, DataType.FLOAT32));
    }

    @Test
    void anAllToAllvBlockOfNoElementsMayHaveAnyDisplacement() {
        long[] counts = {0, 1, 1, 1};
        long[] displs = {1_000_000, 1, 2, 3};
        accepted(() -> c.allToAllv(a, counts, displs, b, counts, displs, DataType.FLOAT32));
        rejected("send and recv overlap", () -> c.allToAllv(a.slice(0, 512), counts, displs, a.slice(4, 512), counts, displs, DataType.FLOAT32));
    }
}
