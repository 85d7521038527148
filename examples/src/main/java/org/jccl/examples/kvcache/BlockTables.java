package org.jccl.examples.kvcache;

import java.util.Random;
import org.jccl.rma.kv.KvBlockPool;

/** Block pools whose ids come out scattered, as a serving engine's block manager hands them out after some churn. */
final class BlockTables {
    private BlockTables() {
    }

    /**
     * A {@link KvBlockPool} of {@code blocks} ids that hands them out in a random order: taking every id and giving them
     * back shuffled leaves its free list shuffled. Block tables are then scattered, so that a transfer that moved a block
     * to the wrong place could not pass for right.
     */
    static KvBlockPool scattered(int blocks, Random random) {
        KvBlockPool pool = new KvBlockPool(blocks);
        int[] ids = pool.allocate(blocks);
        for (int i = ids.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = ids[i];
            ids[i] = ids[j];
            ids[j] = t;
        }
        pool.free(ids);
        return pool;
    }
}
