package org.jccl.examples.kvcache;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.BackendKind;
import org.jccl.rma.kv.KvPool;

/**
 * What stands in for the model on one rank: prefill "computes" a request's KV cache layer by layer into its blocks of
 * the pool ({@link KvBlocks}' pattern), decode checks every byte it received. On GPUs kernels do both on the pool
 * communicator's stream; on the host backend the same pattern is written and checked from Java.
 */
interface KvModel extends AutoCloseable {
    /**
     * The model of {@code pool}'s rank, for at most {@code prompts} requests of at most {@code maxBlocks} blocks each.
     */
    static KvModel of(KvPool pool, int prompts, int maxBlocks) {
        return pool.communicator().backend().kind() == BackendKind.HOST ? new HostKvModel(pool)
                : new GpuKvModel(pool, prompts, maxBlocks);
    }

    /** Request {@code request} of {@code tokens} tokens in {@code blocks} of the pool, in token order. */
    Placed place(long request, int tokens, int[] blocks);

    /** One request's KV cache in the pool. */
    interface Placed {
        /**
         * Writes {@code layer}: issued on the pool communicator's stream (GPU), or done when this returns (host). A layer
         * is then ready to send with {@code KvSend.ready(layer)}. The future fails if the work failed.
         */
        CompletableFuture<Void> computeLayer(int layer);

        /** Counts the bytes of every layer of the request, the rank's heads, that differ from the pattern. */
        CompletableFuture<Long> wrongBytes();
    }

    /** Frees what the model allocated, once the work issued with it completed. */
    @Override
    void close();
}
