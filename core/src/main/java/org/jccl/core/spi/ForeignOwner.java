package org.jccl.core.spi;

import org.jspecify.annotations.Nullable;

/**
 * Who owns memory that a backend wraps without allocating it ({@link MemoryKind#FOREIGN}): jccl never frees such
 * memory; it tells the owner once the last use ended.
 */
public interface ForeignOwner {
    /**
     * Called once, when the last use of the memory ended: the buffer was closed and every work that used it completed.
     * Runs on the thread that dropped the last use, often jccl's event thread: it must be short and must not block.
     */
    void release();

    /**
     * Why the memory can no longer be used although jccl still holds it (its owner freed it), or null while it can.
     * Checked before each operation that uses it; cheap; any thread.
     */
    default @Nullable String whyFreed() {
        return null;
    }
}
