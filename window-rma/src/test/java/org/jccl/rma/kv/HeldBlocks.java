package org.jccl.rma.kv;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link KvBlockPool} whose blocks are all held by the test at first, counting the receiver's attempts to allocate:
 * while nothing is freed, a receiver tries once per request announced, so a test can wait until every sender's
 * requests are queued and only then let grants begin, making the order of grants independent of thread timing.
 */
final class HeldBlocks implements KvBlockAllocator {
    final KvBlockPool pool;
    private final int[] held;
    private final AtomicInteger attempts = new AtomicInteger();

    HeldBlocks(int blocks) {
        pool = new KvBlockPool(blocks);
        held = pool.allocate(blocks);
    }

    @Override
    public int[] allocate(int count) {
        attempts.incrementAndGet();
        return pool.allocate(count);
    }

    @Override
    public void free(int[] blocks) {
        pool.free(blocks);
    }

    @Override
    public void onFree(Runnable listener) {
        pool.onFree(listener);
    }

    /** The receiver's allocation attempts so far. */
    int attempts() {
        return attempts.get();
    }

    /** Gives the held blocks to the receiver. */
    void release() {
        pool.free(held);
    }
}
