package org.jccl.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Byte order of numbers moved between a {@code ByteBuffer} and a {@link Buffer}: devices (and the host backend) hold
 * them in the platform's order, a {@code ByteBuffer} in whatever its {@link ByteBuffer#order()} says — big-endian
 * unless set, for heap and direct buffers alike, and again for every slice and duplicate. The typed transfers of
 * {@link Buffer} convert through here, element by element, knowing the element's size from its {@link DataType}.
 */
final class ElementOrder {
    static final ByteOrder DEVICE = ByteOrder.nativeOrder();

    private ElementOrder() {
    }

    /** Whether elements of {@code size} bytes laid out in {@code order} must be reversed to reach the device's order. */
    static boolean needsConversion(ByteOrder order, int size) {
        return size > 1 && order != DEVICE;
    }

    /** {@code src}'s remaining elements in the device's order, as a new buffer; {@code src} itself is left as it is. */
    static ByteBuffer toDevice(ByteBuffer src, int size) {
        int bytes = src.remaining();
        ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(DEVICE);
        ByteBuffer in = src.duplicate().order(DEVICE);
        int from = in.position();
        for (int i = 0; i < bytes; i += size) reverse(in, from + i, out, i, size);
        return out;
    }

    /** Reverses each element of {@code size} bytes in {@code [from, from + bytes)} of {@code b}, in place. */
    static void reverseInPlace(ByteBuffer b, int from, int bytes, int size) {
        ByteBuffer view = b.duplicate().order(DEVICE);
        for (int i = from; i < from + bytes; i += size) reverse(view, i, view, i, size);
    }

    /** Reading and writing in one order with the bytes reversed between converts either way. */
    private static void reverse(ByteBuffer in, int at, ByteBuffer out, int to, int size) {
        switch (size) {
            case 2 -> out.putShort(to, Short.reverseBytes(in.getShort(at)));
            case 4 -> out.putInt(to, Integer.reverseBytes(in.getInt(at)));
            case 8 -> out.putLong(to, Long.reverseBytes(in.getLong(at)));
            default -> throw new IllegalStateException("no element is " + size + " bytes");
        }
    }
}
