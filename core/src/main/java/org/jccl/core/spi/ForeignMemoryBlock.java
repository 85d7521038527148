package org.jccl.core.spi;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device memory another library allocated, as a GPU driver wraps it: jccl never frees it; when the last reference is
 * released, the owner is told once (and, for an owner kept alive, let go).
 */
public final class ForeignMemoryBlock extends MemoryBlock {
    private static final Logger LOG = LoggerFactory.getLogger(ForeignMemoryBlock.class);

    /** Cleared when released, so a buffer object that outlives its memory does not keep the owner reachable. */
    private final AtomicReference<@Nullable ForeignOwner> owner;

    public ForeignMemoryBlock(long address, long size, int device, ForeignOwner owner) {
        super(address, size, device, MemoryKind.FOREIGN);
        this.owner = new AtomicReference<>(owner);
    }

    /** Device memory: the CPU may not touch it. */
    @Override
    public @Nullable ByteBuffer hostView() {
        return null;
    }

    @Override
    public @Nullable String whyUnusable() {
        ForeignOwner o = owner.get();
        return o == null ? null : o.whyFreed();
    }

    @Override
    protected void free() {
        releaseOnce(owner);
    }

    /**
     * Tells the owner in {@code holder} that the last use ended, once, and drops it. What the owner's callback throws
     * is logged, never passed on: the caller is usually the event thread completing a work.
     */
    public static void releaseOnce(AtomicReference<@Nullable ForeignOwner> holder) {
        ForeignOwner o = holder.getAndSet(null);
        if (o == null) return;
        try {
            o.release();
        } catch (RuntimeException e) {
            LOG.warn("jccl: the release callback of foreign memory failed", e);
        }
    }
}
