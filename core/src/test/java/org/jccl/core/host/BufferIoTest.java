package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/**
 * Data into and out of a Buffer: the typed forms round-trip in the device byte order (converting a ByteBuffer's own
 * order) and check their range; a ByteBuffer with nothing to transfer is refused.
 */
class BufferIoTest {

    @Test
    void typedWritesReadBackAsWritten() {
        try (Buffer b = host().allocate(0, 256)) {
            b.write(0, new float[] {1.5f, -2f, Float.MIN_VALUE});
            assertArrayEquals(new float[] {1.5f, -2f, Float.MIN_VALUE}, b.readFloats(0, 3));
            b.write(16, new double[] {Math.PI, -0.0});
            assertArrayEquals(new double[] {Math.PI, -0.0}, b.readDoubles(16, 2));
            b.write(40, new int[] {7, Integer.MIN_VALUE});
            assertArrayEquals(new int[] {7, Integer.MIN_VALUE}, b.readInts(40, 2));
            b.write(48, new long[] {Long.MAX_VALUE, -3});
            assertArrayEquals(new long[] {Long.MAX_VALUE, -3}, b.readLongs(48, 2));
            // The typed and the ByteBuffer forms see the same bytes.
            ByteBuffer raw = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
            b.read(0, raw);
            assertEquals(1.5f, raw.flip().getFloat(), 0f);
        }
    }

    /**
     * {@code ByteBuffer.allocate} (like {@code wrap} and {@code allocateDirect}) makes a big-endian buffer: raw bytes
     * read into it are in the device's order, so its {@code getFloat()} gave byte-swapped garbage. The typed read
     * converts into the buffer's own order, heap or direct.
     */
    @Test
    void aTypedReadIntoAHeapByteBufferGivesTheValuesInItsOwnOrder() {
        try (Buffer b = host().allocate(0, 64)) {
            b.write(0, new float[] {1.5f, -2f, 3.25f});
            b.write(16, new long[] {Long.MAX_VALUE - 5, -3});
            for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                ByteBuffer floats = ByteBuffer.allocate(12).order(order);
                b.read(0, floats, DataType.FLOAT32);
                assertEquals(12, floats.position(), "the read advances the position like a channel read");
                floats.flip();
                assertArrayEquals(new float[] {1.5f, -2f, 3.25f},
                        new float[] {floats.getFloat(), floats.getFloat(), floats.getFloat()}, order.toString());
                ByteBuffer longs = ByteBuffer.wrap(new byte[20], 4, 16).order(order);
                b.read(16, longs, DataType.INT64);
                assertEquals(Long.MAX_VALUE - 5, longs.getLong(4), order.toString());
                assertEquals(-3, longs.getLong(12), order.toString());
            }
            ByteBuffer defaultHeap = ByteBuffer.allocate(4);
            b.read(0, defaultHeap, DataType.FLOAT32);
            assertEquals(1.5f, defaultHeap.flip().getFloat(), 0f);
        }
    }

    /** Numbers put into a big-endian ByteBuffer arrive as those numbers through the typed write; the source is kept. */
    @Test
    void aTypedWriteConvertsFromTheSourcesOrder() {
        try (Buffer b = host().allocate(0, 64)) {
            ByteBuffer bigEndian = ByteBuffer.allocate(16).putFloat(1.5f).putFloat(-2f).putDouble(Math.PI).flip();
            b.write(0, bigEndian.slice(0, 8).order(ByteOrder.BIG_ENDIAN), DataType.FLOAT32);
            b.write(8, bigEndian.position(8), DataType.FLOAT64);
            assertEquals(16, bigEndian.position(), "the write advances the position like a channel write");
            assertArrayEquals(new float[] {1.5f, -2f}, b.readFloats(0, 2));
            assertArrayEquals(new double[] {Math.PI}, b.readDoubles(8, 1));
            assertEquals(1.5f, bigEndian.getFloat(0), 0f, "the source's bytes are left as they were");
            ByteBuffer halves = ByteBuffer.allocateDirect(4).order(ByteOrder.BIG_ENDIAN).putShort((short) 0x3c00)
                    .putShort((short) 0xc000).flip();
            b.write(24, halves, DataType.FLOAT16);
            ByteBuffer raw = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
            b.read(24, raw);
            assertEquals((short) 0x3c00, raw.getShort(0));
            assertEquals((short) 0xc000, raw.getShort(2));
            ByteBuffer bytes = ByteBuffer.wrap(new byte[] {1, -2, 3});
            b.write(32, bytes, DataType.INT8);
            ByteBuffer back = ByteBuffer.allocate(3);
            b.read(32, back, DataType.UINT8);
            assertArrayEquals(new byte[] {1, -2, 3}, back.array(), "single bytes have no order");
        }
    }

    /**
     * A buffer filled and not flipped has nothing remaining: the write copied 0 bytes and nothing said so. Where a
     * size is expected, zero bytes is refused, and so is a part of an element or a read-only destination.
     */
    @Test
    void byteBuffersWithNothingRemainingOrPartElementsAreRefusedChangingNothing() {
        try (Buffer b = host().allocate(0, 64)) {
            ByteBuffer notFlipped = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putFloat(1f).putFloat(2f);
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> b.write(0, notFlipped));
            assertTrue(e.getMessage().contains("src has no bytes remaining") && e.getMessage().contains("flip"),
                    e.getMessage());
            assertThrows(InvalidArgumentException.class, () -> b.write(0, notFlipped, DataType.FLOAT32));
            assertEquals(8, notFlipped.position());
            ByteBuffer full = ByteBuffer.allocate(8);
            full.position(8);
            InvalidArgumentException read = assertThrows(InvalidArgumentException.class, () -> b.read(0, full));
            assertTrue(read.getMessage().contains("dst has no bytes remaining"), read.getMessage());
            assertThrows(InvalidArgumentException.class, () -> b.read(0, full, DataType.FLOAT32));
            InvalidArgumentException part = assertThrows(InvalidArgumentException.class,
                    () -> b.write(0, ByteBuffer.allocate(6), DataType.FLOAT32));
            assertTrue(part.getMessage().contains("not a whole number of float32 elements"), part.getMessage());
            assertThrows(InvalidArgumentException.class, () -> b.read(0, ByteBuffer.allocate(6), DataType.INT64));
            assertThrows(InvalidArgumentException.class, () -> b.read(0, ByteBuffer.allocate(8).asReadOnlyBuffer()));
            assertThrows(InvalidArgumentException.class, () -> b.write(0, ByteBuffer.allocate(8), null));
            assertArrayEquals(new float[16], b.readFloats(0, 16), "nothing was written");
            b.write(0, new float[0]);
            assertArrayEquals(new float[0], b.readFloats(0, 0), "an empty array is an empty transfer, not a mistake");
        }
    }

    @Test
    void typedTransfersOutsideTheBufferAreRefused() {
        try (Buffer b = host().allocate(0, 8)) {
            assertThrows(InvalidArgumentException.class, () -> b.write(4, new float[] {1f, 2f}));
            assertThrows(InvalidArgumentException.class, () -> b.readLongs(0, 2));
        }
    }
}
