package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
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
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertTrue(e.getMessage().startsWith(c.describe()), e.getMessage());
        assertTrue(driver.launched.isEmpty(), "nothing was launched");
        assertTrue(c.pendingCount() == 0, "nothing is pending");
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
}
