package org.jccl.core.spi;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One allocation of a backend. Reference counted: the owning buffer holds one reference, every pending work that
 * uses it holds one more, so closing a buffer with work in flight defers the free until that work completes.
 */
public abstract class MemoryBlock {
    private final long address;
    private final long size;
    private final int device;
    private final MemoryKind kind;
    private final AtomicInteger references = new AtomicInteger(1);

    protected MemoryBlock(long address, long size, int device, MemoryKind kind) {
        this.address = address;
        this.size = size;
        this.device = device;
        this.kind = kind;
    }

    /** The address the library sees (a device pointer for GPU memory). */
    public final long address() {
        return address;
    }

    public final long size() {
        return size;
    }

    /** The device the memory is on; {@link DriverConstants#HOST_DEVICE} for host memory. */
    public final int device() {
        return device;
    }

    public final MemoryKind kind() {
        return kind;
    }

    /**
     * A view of the whole block as a native-order byte buffer, if the CPU may touch it directly (host-backend and
     * pinned memory), else {@code null}.
     */
    public abstract @Nullable ByteBuffer hostView();

    /**
     * Why the memory can no longer be used although jccl still holds references to it — its owner freed it behind
     * jccl's back, which only {@link MemoryKind#FOREIGN} memory can suffer and only some owners let jccl notice — or
     * null while it is usable. Checked before an operation that uses it is enqueued; cheap; any thread.
     */
    public @Nullable String whyUnusable() {
        return null;
    }

    /** Frees the memory; called once, when the last reference is released. */
    protected abstract void free();

    /** Takes one more reference; fails if the block is already freed. */
    public final void retain() {
        int n;
        do {
            n = references.get();
            if (n <= 0) throw new IllegalStateException("memory block already freed");
        } while (!references.compareAndSet(n, n + 1));
    }

    /** Drops one reference and frees the memory when it was the last. */
    public final void release() {
        int n = references.decrementAndGet();
        if (n == 0) {
            free();
        } else if (n < 0) {
            throw new IllegalStateException("memory block released more often than retained");
        }
    }

    /** Whether the memory has been freed. */
    public final boolean isFreed() {
        return references.get() <= 0;
    }

    /** e.g. {@code MemoryBlock[65536 bytes at 0x7f3a00000000, device 0, foreign]}. */
    @Override
    public String toString() {
        return "MemoryBlock[" + size + " bytes at 0x" + Long.toHexString(address) + ", device " + device + ", "
                + kind.name().toLowerCase(java.util.Locale.ROOT) + (isFreed() ? ", freed" : "") + "]";
    }
}
