package org.jccl.examples.kvcache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPool;

/**
 * {@link KvModel} on the host backend: the pattern written into and checked in the pool from Java, one run of tokens
 * of a block at a time. The pool is the host's memory, so a write is done when it returns and is in place before the
 * transfer's copy of the layer is issued.
 */
final class HostKvModel implements KvModel {
    private final KvLayout layout;
    private final Buffer pool;

    HostKvModel(KvPool pool) {
        this.layout = pool.layout();
        this.pool = pool.buffer();
    }

    @Override
    public Placed place(long request, int tokens, int[] blocks) {
        int[] table = blocks.clone();
        return new Placed() {
            @Override
            public CompletableFuture<Void> computeLayer(int layer) {
                for (int tensor = 0; tensor < layout.tensors(); tensor++) {
                    for (int first = 0; first < tokens; first += layout.tokensPerBlock()) {
                        int count = Math.min(layout.tokensPerBlock(), tokens - first);
                        ByteBuffer rows = rows(count);
                        for (int token = first; token < first + count; token++) {
                            putRow(rows, request, layer, tensor, token);
                        }
                        pool.write(KvBlocks.place(layout, table, layer, tensor, first), rows.flip());
                    }
                }
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Long> wrongBytes() {
                long wrong = 0;
                for (int layer = 0; layer < layout.layers(); layer++) {
                    for (int tensor = 0; tensor < layout.tensors(); tensor++) {
                        for (int first = 0; first < tokens; first += layout.tokensPerBlock()) {
                            int count = Math.min(layout.tokensPerBlock(), tokens - first);
                            ByteBuffer got = rows(count);
                            pool.read(KvBlocks.place(layout, table, layer, tensor, first), got);
                            got.flip();
                            ByteBuffer want = rows(count);
                            for (int token = first; token < first + count; token++) putRow(want, request, layer, tensor, token);
                            want.flip();
                            for (int i = 0; i < got.limit(); i++) if (got.get(i) != want.get(i)) wrong++;
                        }
                    }
                }
                return CompletableFuture.completedFuture(wrong);
            }
        };
    }

    private ByteBuffer rows(int tokens) {
        return ByteBuffer.allocate(Math.toIntExact(tokens * layout.tokenBytes())).order(ByteOrder.nativeOrder());
    }

    /** One token's row of this rank's heads: the model's heads {@code headOffset..}, each its words. */
    private void putRow(ByteBuffer rows, long request, int layer, int tensor, int token) {
        int words = KvBlocks.headWords(layout);
        for (int h = 0; h < layout.kvHeads(); h++) {
            for (int w = 0; w < words; w++) rows.putInt(KvBlocks.word(request, layer, tensor, token, layout.headOffset() + h, w));
        }
    }

    @Override
    public void close() {
        // Nothing of its own: the pool belongs to the rank.
    }
}
