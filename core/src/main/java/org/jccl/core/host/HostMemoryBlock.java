package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * Host-backend memory: a 64-byte aligned, native-order direct buffer, freed deterministically when the last
 * reference goes ({@link DirectMemory}). Its {@link #address()} comes from a synthetic, page-aligned address space that never reuses an
 * address, so live blocks never overlap and offsets are preserved, which is all overlap validation needs, while
 * the backend stays pure Java. Typed whole-block views are made once, so the data path allocates nothing.
 */
final class HostMemoryBlock extends MemoryBlock {
    private static final long PAGE = 4096;
    /** Starts high so that synthetic addresses are never mistaken for small integers; one guard page between blocks. */
    private static final AtomicLong NEXT_ADDRESS = new AtomicLong(1L << 40);
    private static final int ALIGNMENT = 64;

    private final DirectMemory.Allocation allocation;
    private final ByteBuffer data;
    private final FloatBuffer floats;
    private final DoubleBuffer doubles;
    private final IntBuffer ints;
    private final LongBuffer longs;
    private final ShortBuffer shorts;

    private HostMemoryBlock(long address, DirectMemory.Allocation allocation, MemoryKind kind) {
        super(address, allocation.buffer().capacity(), DriverConstants.HOST_DEVICE, kind);
        this.allocation = allocation;
        this.data = allocation.buffer().order(ByteOrder.nativeOrder());
        this.floats = data.asFloatBuffer();
        this.doubles = data.asDoubleBuffer();
        this.ints = data.asIntBuffer();
        this.longs = data.asLongBuffer();
        this.shorts = data.asShortBuffer();
    }

    /** A new zeroed block of {@code bytes} (at most {@code Integer.MAX_VALUE - 64}: one direct buffer). */
    static HostMemoryBlock allocate(long bytes, MemoryKind kind) {
        if (bytes <= 0 || bytes > Integer.MAX_VALUE - ALIGNMENT) {
            throw new InvalidArgumentException("the host backend allocates 1.." + (Integer.MAX_VALUE - ALIGNMENT)
                    + " bytes per buffer, not " + bytes);
        }
        long span = (bytes + PAGE - 1) / PAGE * PAGE + PAGE;
        return new HostMemoryBlock(NEXT_ADDRESS.getAndAdd(span), DirectMemory.allocate((int) bytes, ALIGNMENT), kind);
    }

    /** The whole block; absolute indices only (the buffer is shared by all threads). */
    ByteBuffer bytes() {
        return data;
    }

    FloatBuffer floats() {
        return floats;
    }

    DoubleBuffer doubles() {
        return doubles;
    }

    IntBuffer ints() {
        return ints;
    }

    LongBuffer longs() {
        return longs;
    }

    ShortBuffer shorts() {
        return shorts;
    }

    /** A duplicate of the whole block; refused once freed (touching freed native memory would crash the JVM). */
    @Override
    public @Nullable ByteBuffer hostView() {
        if (isFreed()) throw new IllegalStateException("host memory block already freed");
        return data.duplicate().order(ByteOrder.nativeOrder());
    }

    @Override
    protected void free() {
        allocation.free();
    }
}
