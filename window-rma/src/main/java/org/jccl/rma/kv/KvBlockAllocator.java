package org.jccl.rma.kv;

import org.jspecify.annotations.Nullable;

/**
 * Where a KV receiver gets destination blocks: the decode engine's own block manager, or a {@link KvBlockPool}. A
 * request is granted only the blocks this hands out, so decode never receives more than it can hold; when it has none,
 * requests wait (the prefill ranks wait too, without retrying) until {@link #onFree} reports some.
 */
public interface KvBlockAllocator {
    /** {@code count} distinct free block ids, now taken; or null when there are not that many free. Must not block. */
    int @Nullable [] allocate(int count);

    /** Gives back blocks that {@link #allocate} handed out (a failed or cancelled request's, or a finished one's). */
    void free(int[] blocks);

    /** Registers {@code listener}, run after blocks were freed so that waiting requests are granted. */
    void onFree(Runnable listener);
}
