package org.jccl.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;

/**
 * Memory that operations read and write: device memory on GPU backends, aligned off-heap memory on the host
 * backend. A buffer made by {@link Backend#allocate} owns its memory; {@link #slice} makes views that share it.
 *
 * <p>Lifetime: each pending {@link Work} keeps the memory alive, so {@link #close()} with work in flight only
 * marks the buffer closed (new operations are rejected) and the memory is freed when that work completes.
 */
public final class Buffer implements AutoCloseable {
    private final Driver driver;
    private final MemoryBlock block;
    private final long offset;
    private final long byteSize;
    private final AtomicBoolean closed;
    private final boolean owner;
    /** Where drivers see this buffer; made once, so the hot path neither allocates it nor misses it in cache. */
    private final MemoryRef ref;

    Buffer(Driver driver, MemoryBlock block) {
        this(driver, block, 0, block.size(), new AtomicBoolean(), true);
    }

    private Buffer(Driver driver, MemoryBlock block, long offset, long byteSize, AtomicBoolean closed, boolean owner) {
        this.driver = driver;
        this.block = block;
        this.offset = offset;
        this.byteSize = byteSize;
        this.closed = closed;
        this.owner = owner;
        this.ref = new MemoryRef(block, offset);
    }

    /** A view of {@code byteSize} bytes starting {@code offset} bytes into this buffer; closed with its owner. */
    public Buffer slice(long offset, long byteSize) {
        checkOpen();
        if (offset < 0 || byteSize < 0 || offset > this.byteSize - byteSize) {
            throw new InvalidArgumentException("slice [" + offset + ", +" + byteSize + ") is outside a buffer of "
                    + this.byteSize + " bytes");
        }
        return new Buffer(driver, block, this.offset + offset, byteSize, closed, false);
    }

    /** The address passed to the library (a device pointer on GPU backends). */
    public long address() {
        return block.address() + offset;
    }

    public long byteSize() {
        return byteSize;
    }

    /** The number of whole elements of {@code type} that fit. */
    public long capacity(DataType type) {
        return byteSize / type.size();
    }

    /** The device the memory is on; -1 for host memory. */
    public int device() {
        return block.device();
    }

    public MemoryKind kind() {
        return block.kind();
    }

    /** This view's offset into the allocation. */
    public long offset() {
        return offset;
    }

    /**
     * Copies {@code src}'s remaining bytes into this buffer at {@code at}; synchronous. Like a channel write, it
     * advances {@code src}'s position past the bytes copied. The bytes are copied as they lie, and devices hold
     * numbers in the platform's byte order: put numbers into {@code src} in {@link ByteOrder#nativeOrder()} (a
     * {@code ByteBuffer}'s default, big-endian, turns 1.5f into 6.9e-41). The order of {@code src} itself cannot be
     * checked — its slices and duplicates report big-endian whatever their bytes hold — so prefer the typed forms
     * ({@link #write(long, float[])} and its siblings), which take care of it.
     */
    public void write(long at, ByteBuffer src) {
        Errors.requireArgument(src, "src");
        int n = src.remaining();
        checkRange(at, n);
        driver.write(block, offset + at, src.duplicate());
        src.position(src.position() + n);
    }

    /**
     * Fills {@code dst}'s remaining bytes from this buffer at {@code at}; synchronous. Like a channel read, it
     * advances {@code dst}'s position past the bytes filled (flip it to read them). Read numbers from it in
     * {@link ByteOrder#nativeOrder()}, as for {@link #write(long, ByteBuffer)}; or use the typed forms
     * ({@link #readFloats} and its siblings).
     */
    public void read(long at, ByteBuffer dst) {
        Errors.requireArgument(dst, "dst");
        int n = dst.remaining();
        checkRange(at, n);
        driver.read(block, offset + at, dst.duplicate());
        dst.position(dst.position() + n);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, float[] values) {
        ByteBuffer b = staging(4L * values.length);
        b.asFloatBuffer().put(values);
        write(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, double[] values) {
        ByteBuffer b = staging(8L * values.length);
        b.asDoubleBuffer().put(values);
        write(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, int[] values) {
        ByteBuffer b = staging(4L * values.length);
        b.asIntBuffer().put(values);
        write(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, long[] values) {
        ByteBuffer b = staging(8L * values.length);
        b.asLongBuffer().put(values);
        write(at, b);
    }

    /** Reads {@code count} floats from byte offset {@code at}; synchronous. */
    public float[] readFloats(long at, int count) {
        var from = read(at, 4L * count).asFloatBuffer();
        float[] out = new float[count];
        from.get(out);
        return out;
    }

    /** Reads {@code count} doubles from byte offset {@code at}; synchronous. */
    public double[] readDoubles(long at, int count) {
        var from = read(at, 8L * count).asDoubleBuffer();
        double[] out = new double[count];
        from.get(out);
        return out;
    }

    /** Reads {@code count} ints from byte offset {@code at}; synchronous. */
    public int[] readInts(long at, int count) {
        var from = read(at, 4L * count).asIntBuffer();
        int[] out = new int[count];
        from.get(out);
        return out;
    }

    /** Reads {@code count} longs from byte offset {@code at}; synchronous. */
    public long[] readLongs(long at, int count) {
        var from = read(at, 8L * count).asLongBuffer();
        long[] out = new long[count];
        from.get(out);
        return out;
    }

    private ByteBuffer read(long at, long bytes) {
        checkRange(at, bytes); // before anything is allocated: a count too large (or negative) costs nothing
        ByteBuffer b = staging(bytes);
        read(at, b);
        return b.flip();
    }

    private static ByteBuffer staging(long bytes) {
        if (bytes < 0 || bytes > Integer.MAX_VALUE - 8) {
            throw new InvalidArgumentException(bytes + " bytes do not fit one transfer; copy in parts");
        }
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }

    /** Whether this buffer (or the buffer it is a view of) was closed. */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Closes the owning buffer: later operations on it or its views are rejected; the memory is freed once no
     * pending work uses it. Closing a view only does nothing. Idempotent.
     */
    @Override
    public void close() {
        if (owner && closed.compareAndSet(false, true)) block.release();
    }

    /** The backend's memory block: the engine's and, through {@link Modules}' contexts, modules'. */
    MemoryBlock block() {
        return block;
    }

    /** The block and offset drivers receive for this buffer. */
    MemoryRef ref() {
        return ref;
    }

    void checkOpen() {
        if (closed.get()) throw new InvalidUsageException("buffer " + this + " is closed");
    }

    private void checkRange(long at, long bytes) {
        checkOpen();
        if (at < 0 || bytes < 0 || at > byteSize - bytes) {
            throw new InvalidArgumentException("range [" + at + ", +" + bytes + ") is outside a buffer of " + byteSize + " bytes");
        }
    }

    @Override
    public String toString() {
        return "Buffer[" + byteSize + " bytes, device " + block.device() + ", " + block.kind().name().toLowerCase()
                + (offset == 0 ? "" : ", offset " + offset) + "]";
    }
}
