package org.jccl.core;

import java.util.Arrays;

/**
 * A tensor taken from another library through DLPack ({@link Dlpack#importTensor}): a {@link Buffer} over its memory,
 * used in place, with its element type and shape. Closing it closes the buffer; the tensor's deleter is called once
 * that happened and every operation that used it completed.
 */
public final class DlpackTensor implements AutoCloseable {
    private final Buffer buffer;
    private final DataType type;
    private final long[] shape;
    private final long count;

    DlpackTensor(Buffer buffer, DataType type, long[] shape, long count) {
        this.buffer = buffer;
        this.type = type;
        this.shape = shape.clone();
        this.count = count;
    }

    /** The tensor's memory, for every operation, window and kernel argument. */
    public Buffer buffer() {
        return buffer;
    }

    /** The element type. */
    public DataType type() {
        return type;
    }

    /** The shape, outermost dimension first (a copy). */
    public long[] shape() {
        return shape.clone();
    }

    /** The number of elements: the product of the shape (1 for a tensor of no dimensions). */
    public long count() {
        return count;
    }

    /** Closes the buffer; the deleter runs once no operation uses the memory any more. Idempotent. */
    @Override
    public void close() {
        buffer.close();
    }

    @Override
    public String toString() {
        return "DlpackTensor[" + type + Arrays.toString(shape) + ", " + buffer + "]";
    }
}
