package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jccl.core.Buffer;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** Data into and out of a Buffer: the typed forms round-trip in the device byte order and check their range. */
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

    @Test
    void typedTransfersOutsideTheBufferAreRefused() {
        try (Buffer b = host().allocate(0, 8)) {
            assertThrows(InvalidArgumentException.class, () -> b.write(4, new float[] {1f, 2f}));
            assertThrows(InvalidArgumentException.class, () -> b.readLongs(0, 2));
        }
    }
}
