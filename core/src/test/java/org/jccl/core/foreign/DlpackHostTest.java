package org.jccl.core.foreign;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Dlpack;
import org.jccl.core.DlpackTensor;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.nccl.DlpackNative;
import org.jccl.core.nccl.NativeMemory;
import org.junit.jupiter.api.Test;

/**
 * DLPack on the host backend: jccl's native structures have dlpack.h's layout, a tensor exported and imported again is
 * the same memory, its deleter ends the export, and every tensor jccl cannot use is refused before it is taken.
 */
class DlpackHostTest {
    private static final Backend HOST = Jccl.backend(BackendKind.HOST);
    private static final int KDL_CPU = 1;
    private static final int KDL_CUDA = 2;
    private static final int KDL_FLOAT = 2;

    static {
        NativeMemory.load(); // the hand-made tensors below are JavaCPP memory
    }

    @Test
    void theNativeStructuresHaveTheLayoutOfDlpackH() {
        // dlpack.h on LP64: DLTensor 48 bytes (shape at 24, byte_offset at 40), DLManagedTensor 64 (manager_ctx at 48,
        // deleter at 56).
        assertArrayEquals(new long[] {48, 64, 24, 40, 48, 56}, DlpackNative.layout());
    }

    @Test
    void aBufferExportedAndImportedIsTheSameMemoryAndItsDeleterEndsTheExport() throws Exception {
        List<Communicator> comms = HOST.initAll(2).get(30, TimeUnit.SECONDS);
        int exportsBefore = DlpackNative.liveExports();
        Buffer[] mine = new Buffer[2];
        try {
            DlpackTensor[] tensors = new DlpackTensor[2];
            Work[] works = new Work[2];
            for (int r = 0; r < 2; r++) {
                mine[r] = HOST.allocate(0, 4 * 8);
                mine[r].write(0, new float[] {r + 1, r + 1, r + 1, r + 1, r + 1, r + 1, r + 1, r + 1});
                long tensor = Dlpack.exportTensor(mine[r], DataType.FLOAT32, new long[] {2, 4});
                tensors[r] = Dlpack.importTensor(comms.get(r), tensor);
                assertEquals(DataType.FLOAT32, tensors[r].type());
                assertArrayEquals(new long[] {2, 4}, tensors[r].shape());
                assertEquals(8, tensors[r].count());
                Buffer b = tensors[r].buffer();
                works[r] = comms.get(r).allReduce(b, b, tensors[r].count(), tensors[r].type(), ReduceOp.SUM);
            }
            for (Work w : works) w.get(30, TimeUnit.SECONDS);
            for (int r = 0; r < 2; r++) {
                assertArrayEquals(new float[] {3, 3, 3, 3, 3, 3, 3, 3}, mine[r].readFloats(0, 8),
                        "rank " + r + ": the all-reduce on the imported tensor changed the exported buffer (zero copy)");
            }
            assertEquals(exportsBefore + 2, DlpackNative.liveExports());
            for (DlpackTensor t : tensors) t.close(); // the last use ends: jccl calls each tensor's deleter
            await().atMost(Duration.ofSeconds(30)).until(() -> DlpackNative.liveExports() == exportsBefore);
        } finally {
            for (Buffer b : mine) if (b != null) b.close();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void anExportKeepsTheMemoryAliveAfterItsBufferIsClosedUntilTheDeleterRuns() {
        int exportsBefore = DlpackNative.liveExports();
        Buffer buffer = HOST.allocate(0, 16);
        buffer.write(0, new int[] {7, 8, 9, 10});
        long tensor = Dlpack.exportTensor(buffer, DataType.INT32);
        buffer.close();
        try (DlpackTensor imported = Dlpack.importTensor(HOST, tensor)) {
            assertArrayEquals(new int[] {7, 8, 9, 10}, imported.buffer().readInts(0, 4), "the memory outlived its buffer");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> DlpackNative.liveExports() == exportsBefore);
    }

    @Test
    void aCContiguousTensorWithArbitraryStridesAlongDimensionsOfOneIsAccepted() {
        try (HandMade t = new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {3, 1, 4}, new long[] {4, 99, 1}, 0);
             DlpackTensor imported = Dlpack.importTensor(HOST, t.address())) {
            assertEquals(12, imported.count());
            assertEquals(48, imported.buffer().byteSize());
            assertEquals(t.data.address(), imported.buffer().address());
        }
    }

    @Test
    void tensorsJcclCannotUseAreRefusedAndStayTheCallers() {
        assertThrows(InvalidArgumentException.class, () -> Dlpack.importTensor(HOST, 0));
        refused(new HandMade(KDL_CUDA, KDL_FLOAT, 32, 1, new long[] {4}, null, 0), "kDLCUDA memory");
        refused(new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {2, 3}, new long[] {1, 2}, 0), "not C-contiguous");
        refused(new HandMade(KDL_CPU, 5, 64, 1, new long[] {4}, null, 0), "complex64");
        refused(new HandMade(KDL_CPU, 6, 8, 1, new long[] {4}, null, 0), "view a bool tensor as uint8");
        refused(new HandMade(KDL_CPU, 0, 16, 1, new long[] {4}, null, 0), "int16");
        refused(new HandMade(KDL_CPU, KDL_FLOAT, 32, 2, new long[] {4}, null, 0), "lanes");
        refused(new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {4, 0}, null, 0), "no elements");
        refused(new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {3}, null, 2), "not aligned");
        refused(new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {-3}, null, 0), "negative dimension");
    }

    @Test
    void aTensorIsConsumedOnce() {
        try (HandMade t = new HandMade(KDL_CPU, KDL_FLOAT, 32, 1, new long[] {4}, null, 0)) {
            DlpackTensor first = Dlpack.importTensor(HOST, t.address());
            assertThrows(InvalidUsageException.class, () -> Dlpack.importTensor(HOST, t.address()));
            first.close();
            Dlpack.importTensor(HOST, t.address()).close(); // released: it may come again
        }
    }

    @Test
    void anExportLargerThanItsBufferOrOfAClosedBufferIsRefused() {
        Buffer buffer = HOST.allocate(0, 16);
        assertThrows(InvalidArgumentException.class, () -> Dlpack.exportTensor(buffer, DataType.FLOAT32, new long[] {5}));
        assertThrows(InvalidArgumentException.class, () -> Dlpack.exportTensor(buffer, DataType.FLOAT32, new long[] {-1}));
        buffer.close();
        assertThrows(InvalidUsageException.class, () -> Dlpack.exportTensor(buffer, DataType.FLOAT32));
    }

    private static void refused(HandMade tensor, String reason) {
        try (tensor) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> Dlpack.importTensor(HOST, tensor.address()));
            assertTrue(e.getMessage().contains(reason), e.getMessage());
        }
    }

    /** A {@code DLManagedTensor} as another library would hand it over, with no deleter, laid out by hand. */
    private static final class HandMade implements AutoCloseable {
        final BytePointer data = new BytePointer(256);
        private final BytePointer managed = new BytePointer(64);
        private final BytePointer shape;
        private final BytePointer strides;

        HandMade(int deviceType, int code, int bits, int lanes, long[] dims, long[] stridesOrNull, long byteOffset) {
            managed.fill(0);
            shape = new BytePointer(8L * dims.length);
            for (int i = 0; i < dims.length; i++) shape.putLong(8L * i, dims[i]);
            strides = new BytePointer(8L * Math.max(1, dims.length));
            if (stridesOrNull != null) for (int i = 0; i < dims.length; i++) strides.putLong(8L * i, stridesOrNull[i]);
            managed.putLong(0, data.address());
            managed.putInt(8, deviceType);
            managed.putInt(12, 0);
            managed.putInt(16, dims.length);
            managed.put(20, (byte) code);
            managed.put(21, (byte) bits);
            managed.putShort(22, (short) lanes);
            managed.putLong(24, shape.address());
            managed.putLong(32, stridesOrNull == null ? 0 : strides.address());
            managed.putLong(40, byteOffset);
        }

        long address() {
            return managed.address();
        }

        @Override
        public void close() {
            managed.deallocate();
            shape.deallocate();
            strides.deallocate();
            data.deallocate();
        }
    }
}
