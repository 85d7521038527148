package org.jccl.core.foreign;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.nccl.NativeMemory;
import org.jccl.core.spi.MemoryKind;
import org.junit.jupiter.api.Test;

/**
 * Memory jccl did not allocate, used in place on the host backend: a direct {@code ByteBuffer}'s memory and memory
 * from JavaCPP, found by their addresses as another library would hand them over.
 */
class ForeignMemoryHostTest {
    private static final Backend HOST = Jccl.backend(BackendKind.HOST);

    static {
        NativeMemory.load(); // JavaCPP's BytePointer, standing for another library's memory, needs its natives
    }

    @Test
    void anAllReduceRunsInPlaceOnTheMemoryOfDirectByteBuffers() throws Exception {
        int n = 1000;
        List<Communicator> comms = HOST.initAll(2).get(30, TimeUnit.SECONDS);
        ByteBuffer[] memory = new ByteBuffer[2];
        Buffer[] wrapped = new Buffer[2];
        try {
            Work[] works = new Work[2];
            for (int r = 0; r < 2; r++) {
                memory[r] = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
                for (int i = 0; i < n; i++) memory[r].putFloat(4 * i, (r + 1) * i);
                wrapped[r] = HOST.wrap(-1, NativeMemory.addressOf(memory[r]), 4L * n, memory[r]);
                assertEquals(MemoryKind.FOREIGN, wrapped[r].kind());
                works[r] = comms.get(r).allReduce(wrapped[r], wrapped[r], n, DataType.FLOAT32, ReduceOp.SUM);
            }
            for (Work w : works) w.get(30, TimeUnit.SECONDS);
            for (int r = 0; r < 2; r++) {
                for (int i = 0; i < n; i++) {
                    assertEquals(3f * i, memory[r].getFloat(4 * i), "element " + i + " of rank " + r + ", read from its own ByteBuffer");
                }
            }
        } finally {
            for (Buffer b : wrapped) if (b != null) b.close();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void theReleaseCallbackRunsOnceAfterTheLastOperationThatUsedTheMemoryCompleted() throws Exception {
        List<Communicator> comms = HOST.initAll(2).get(30, TimeUnit.SECONDS);
        AtomicInteger releases = new AtomicInteger();
        try (BytePointer memory = new BytePointer(64);
             Buffer other = HOST.allocate(0, 64)) {
            memory.fill(0);
            Buffer foreign = HOST.wrapWithRelease(-1, memory.address(), 64, releases::incrementAndGet);
            Work first = comms.get(0).allReduce(foreign, foreign, 16, DataType.FLOAT32, ReduceOp.SUM);
            foreign.close(); // rank 1 has not joined the all-reduce: the memory is still in use
            assertEquals(0, releases.get(), "released while an operation still uses the memory");
            Work second = comms.get(1).allReduce(other, other, 16, DataType.FLOAT32, ReduceOp.SUM);
            first.get(30, TimeUnit.SECONDS);
            second.get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> releases.get() == 1);
            foreign.close();
            assertEquals(1, releases.get(), "released more than once");
        } finally {
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void memoryItsJavaCppOwnerDeallocatedIsRefusedBeforeAnythingIsEnqueued() throws Exception {
        Communicator comm = HOST.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        try {
            BytePointer owner = new BytePointer(64);
            Buffer foreign = HOST.wrap(-1, owner.address(), 64, owner);
            owner.deallocate();
            InvalidUsageException e = assertThrows(InvalidUsageException.class,
                    () -> comm.allReduce(foreign, foreign, 16, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(e.getMessage().contains("was deallocated"), e.getMessage());
            assertEquals(0, comm.pendingCount(), "nothing may be enqueued");
            foreign.close();
        } finally {
            comm.close();
        }
    }

    @Test
    void nullAddressesEmptySizesAndMissingOwnersAreRefused() {
        try (BytePointer memory = new BytePointer(64)) {
            assertThrows(InvalidArgumentException.class, () -> HOST.wrap(-1, 0, 64, memory));
            assertThrows(InvalidArgumentException.class, () -> HOST.wrap(-1, memory.address(), 0, memory));
            assertThrows(InvalidArgumentException.class, () -> HOST.wrap(-1, -16, 64, memory));
            assertThrows(InvalidArgumentException.class, () -> HOST.wrap(-1, memory.address(), 64, null));
            assertThrows(InvalidArgumentException.class, () -> HOST.wrapWithRelease(-1, memory.address(), 64, null));
        }
    }
}
