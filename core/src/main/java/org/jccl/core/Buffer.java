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
import org.jspecify.annotations.Nullable;

/**
 * Memory that operations read and write: device memory on GPU backends, aligned off-heap memory on the host
 * backend. A buffer made by {@link Backend#allocate} owns its memory; {@link #slice} makes views that share it. A
 * buffer made by {@link Backend#wrap} uses memory another library allocated ({@link MemoryKind#FOREIGN}): closing it
 * never frees that memory, it lets its owner go once no work uses it.
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
    /** The buffer this one is a {@linkplain #part part} of (closed with it), or null. */
    private final @Nullable Buffer within;
    /** A part's hook, run once when it is closed. */
    private final @Nullable Runnable onClose;

    Buffer(Driver driver, MemoryBlock block) {
        this(driver, block, 0, block.size(), new AtomicBoolean(), true, null, null);
    }

    private Buffer(Driver driver, MemoryBlock block, long offset, long byteSize, AtomicBoolean closed, boolean owner,
                   @Nullable Buffer within, @Nullable Runnable onClose) {
        this.driver = driver;
        this.block = block;
        this.offset = offset;
        this.byteSize = byteSize;
        this.closed = closed;
        this.owner = owner;
        this.ref = new MemoryRef(block, offset);
        this.within = within;
        this.onClose = onClose;
    }

    /** A view of {@code byteSize} bytes starting {@code offset} bytes into this buffer; closed with its owner. */
    public Buffer slice(long offset, long byteSize) {
        checkOpen();
        if (offset < 0 || byteSize < 0 || offset > this.byteSize - byteSize) {
            throw new InvalidArgumentException("slice [" + offset + ", +" + byteSize + ") is outside a buffer of "
                    + this.byteSize + " bytes");
        }
        return new Buffer(driver, block, this.offset + offset, byteSize, closed, false, within, null);
    }

    /**
     * A part of this buffer that is a buffer of its own (a pool's allocation, {@code ModuleContext.part}): closed on
     * its own, which refuses it to later operations and runs {@code onClose} once, and closed with this buffer too.
     * Its memory is this buffer's: pending work keeps it alive, as for a view.
     */
    Buffer part(long offset, long byteSize, Runnable onClose) {
        checkRange(offset, byteSize);
        return new Buffer(driver, block, this.offset + offset, byteSize, new AtomicBoolean(), true, this, onClose);
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
     * numbers in the platform's byte order: a {@code ByteBuffer} that holds numbers must have been filled in
     * {@link ByteOrder#nativeOrder()} (a {@code ByteBuffer}'s default, big-endian, turns 1.5f into 6.9e-41). Its order
     * cannot be trusted here — slices and duplicates report big-endian whatever their bytes hold —, so for numbers
     * use {@link #write(long, ByteBuffer, DataType)}, which converts from {@code src.order()}, or the array forms.
     *
     * @throws InvalidArgumentException if {@code src} has nothing remaining (filled and not flipped: nothing would
     *                                  be copied), or the range is outside this buffer
     */
    public void write(long at, ByteBuffer src) {
        copyIn(at, withRemaining(src, "src"));
    }

    /**
     * Writes {@code src}'s remaining bytes as elements of {@code type} at {@code at}, converting each from
     * {@code src.order()} to the device's byte order; synchronous. A {@code ByteBuffer} filled with
     * {@code putFloat}, {@code putInt}… in any order (big-endian unless set) arrives as the numbers put into it. It
     * advances {@code src}'s position past the bytes written and leaves its content as it was.
     *
     * @throws InvalidArgumentException if {@code src} has nothing remaining (filled and not flipped), its remaining
     *                                  bytes are not a whole number of elements, or the range is outside this buffer
     */
    public void write(long at, ByteBuffer src, DataType type) {
        int bytes = wholeElements(src, "src", type);
        if (!ElementOrder.needsConversion(src.order(), type.size())) {
            copyIn(at, src);
            return;
        }
        checkRange(at, bytes); // before the converted copy is made
        copyIn(at, ElementOrder.toDevice(src, type.size()));
        src.position(src.position() + bytes);
    }

    /**
     * Fills {@code dst}'s remaining bytes from this buffer at {@code at}; synchronous. Like a channel read, it
     * advances {@code dst}'s position past the bytes filled (flip it to read them). The bytes arrive as they lie, in
     * the device's byte order: numbers are read from {@code dst} correctly only in {@link ByteOrder#nativeOrder()},
     * while {@code ByteBuffer.allocate}, {@code wrap} and {@code allocateDirect} make big-endian buffers, whose
     * {@code getFloat()} then returns byte-swapped garbage. For numbers use {@link #read(long, ByteBuffer, DataType)},
     * which converts into {@code dst.order()}, or the typed forms ({@link #readFloats} and its siblings).
     *
     * @throws InvalidArgumentException if {@code dst} has nothing remaining (already full: nothing would be read), is
     *                                  read-only, or the range is outside this buffer
     */
    public void read(long at, ByteBuffer dst) {
        copyOut(at, writable(withRemaining(dst, "dst")));
    }

    /**
     * Fills {@code dst}'s remaining bytes with elements of {@code type} from this buffer at {@code at}, each in
     * {@code dst.order()}; synchronous. Reading numbers back with {@code dst}'s own {@code getFloat()},
     * {@code getInt()}… gives the values the device holds, whatever the order of {@code dst} (big-endian unless set,
     * heap or direct). It advances {@code dst}'s position past the bytes filled (flip it to read them).
     *
     * @throws InvalidArgumentException if {@code dst} has nothing remaining, is read-only, its remaining bytes are
     *                                  not a whole number of elements, or the range is outside this buffer
     */
    public void read(long at, ByteBuffer dst, DataType type) {
        int bytes = wholeElements(writable(dst), "dst", type);
        int from = dst.position();
        copyOut(at, dst);
        if (ElementOrder.needsConversion(dst.order(), type.size())) ElementOrder.reverseInPlace(dst, from, bytes, type.size());
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, float[] values) {
        ByteBuffer b = staging(4L * values.length);
        b.asFloatBuffer().put(values);
        copyIn(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, double[] values) {
        ByteBuffer b = staging(8L * values.length);
        b.asDoubleBuffer().put(values);
        copyIn(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, int[] values) {
        ByteBuffer b = staging(4L * values.length);
        b.asIntBuffer().put(values);
        copyIn(at, b);
    }

    /** Writes {@code values} at byte offset {@code at}; synchronous. */
    public void write(long at, long[] values) {
        ByteBuffer b = staging(8L * values.length);
        b.asLongBuffer().put(values);
        copyIn(at, b);
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
        copyOut(at, b);
        return b.flip();
    }

    private void copyIn(long at, ByteBuffer src) {
        int n = src.remaining();
        checkRange(at, n);
        driver.write(block, offset + at, src.duplicate());
        src.position(src.position() + n);
    }

    private void copyOut(long at, ByteBuffer dst) {
        int n = dst.remaining();
        checkRange(at, n);
        driver.read(block, offset + at, dst.duplicate());
        dst.position(dst.position() + n);
    }

    /** {@code b}, refused if it has nothing remaining: where a size is expected, zero bytes is a mistake. */
    private static ByteBuffer withRemaining(@Nullable ByteBuffer buffer, String name) {
        ByteBuffer b = Errors.requireArgument(buffer, name);
        if (!b.hasRemaining()) {
            throw new InvalidArgumentException(name + " has no bytes remaining (position " + b.position() + " = limit "
                    + b.limit() + "): flip a ByteBuffer after filling it, or clear it before filling it again");
        }
        return b;
    }

    private static ByteBuffer writable(@Nullable ByteBuffer dst) {
        ByteBuffer b = Errors.requireArgument(dst, "dst");
        if (b.isReadOnly()) throw new InvalidArgumentException("dst is read-only");
        return b;
    }

    /** {@code b}'s remaining bytes, refused unless they are a whole, non-zero number of {@code type} elements. */
    private static int wholeElements(@Nullable ByteBuffer buffer, String name, @Nullable DataType type) {
        int bytes = withRemaining(buffer, name).remaining();
        Errors.requireArgument(type, "type");
        if (bytes % type.size() != 0) {
            throw new InvalidArgumentException(name + " has " + bytes + " bytes remaining, not a whole number of "
                    + type + " elements of " + type.size() + " bytes");
        }
        return bytes;
    }

    private static ByteBuffer staging(long bytes) {
        if (bytes < 0 || bytes > Integer.MAX_VALUE - 8) {
            throw new InvalidArgumentException(bytes + " bytes do not fit one transfer; copy in parts");
        }
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }

    /** Whether this buffer (or the buffer it is a view or a part of) was closed. */
    public boolean isClosed() {
        return closed.get() || within != null && within.isClosed();
    }

    /**
     * Closes the owning buffer: later operations on it or its views are rejected; the memory is freed once no
     * pending work uses it (a part only tells its owner it is free). Closing a view only does nothing. Idempotent.
     */
    @Override
    public void close() {
        if (owner && closed.compareAndSet(false, true)) {
            if (onClose != null) onClose.run(); // a part: the memory is its parent's
            else block.release();
        }
    }

    /** The backend's memory block: the engine's and, through {@link Modules}' contexts, modules'. */
    MemoryBlock block() {
        return block;
    }

    /** The address native code outside jccl sees (the host backend's own memory has synthetic {@link #address()}es). */
    long nativeAddress() {
        return driver.nativeAddress(block, offset);
    }

    /** Which backend's memory this is. */
    BackendKind backendKind() {
        return driver.kind();
    }

    /** The block and offset drivers receive for this buffer. */
    MemoryRef ref() {
        return ref;
    }

    /** Refuses a closed buffer, and one whose foreign memory its owner freed. */
    void checkOpen() {
        if (isClosed()) throw new InvalidUsageException("buffer " + this + " is closed");
        String gone = block.whyUnusable();
        if (gone != null) throw new InvalidUsageException("buffer " + this + " cannot be used: " + gone);
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
