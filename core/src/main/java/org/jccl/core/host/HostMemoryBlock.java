package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.ForeignMemoryBlock;
import org.jccl.core.spi.ForeignOwner;
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

    /** Frees the memory, or tells a foreign owner its last use ended; run once. */
    private final Runnable free;
    /** A foreign block's owner until its last use ended; null for memory the backend allocated. */
    private final @Nullable AtomicReference<@Nullable ForeignOwner> foreignOwner;
    private final ByteBuffer data;
    private final FloatBuffer floats;
    private final DoubleBuffer doubles;
    private final IntBuffer ints;
    private final LongBuffer longs;
    private final ShortBuffer shorts;

    private HostMemoryBlock(long address, ByteBuffer memory, MemoryKind kind, Runnable free,
                            @Nullable AtomicReference<@Nullable ForeignOwner> foreignOwner) {
        super(address, memory.capacity(), DriverConstants.HOST_DEVICE, kind);
        this.free = free;
        this.foreignOwner = foreignOwner;
        this.data = memory.order(ByteOrder.nativeOrder());
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
        DirectMemory.Allocation allocation = DirectMemory.allocate((int) bytes, ALIGNMENT);
        return new HostMemoryBlock(NEXT_ADDRESS.getAndAdd(span), allocation.buffer(), kind, allocation::free, null);
    }

    /**
     * Host memory another library allocated, at its real {@code address} (so two wraps of one region are seen as the
     * same or overlapping memory), read and written through {@code view}; freeing it tells {@code owner}.
     */
    static HostMemoryBlock foreign(long address, ByteBuffer view, ForeignOwner owner) {
        AtomicReference<@Nullable ForeignOwner> holder = new AtomicReference<>(owner);
        return new HostMemoryBlock(address, view, MemoryKind.FOREIGN, () -> ForeignMemoryBlock.releaseOnce(holder), holder);
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
    public @Nullable String whyUnusable() {
        ForeignOwner owner = foreignOwner == null ? null : foreignOwner.get();
        return owner == null ? null : owner.whyFreed();
    }

    @Override
    protected void free() {
        free.run();
    }
}
