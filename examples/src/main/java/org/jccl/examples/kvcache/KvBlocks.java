package org.jccl.examples.kvcache;

import org.jccl.rma.kv.KvLayout;

/**
 * What the "model" writes into the KV cache, so that decode can check every byte without being told anything but the
 * request's id: one 32-bit word per (request, layer, tensor, token, model head, word of the head's row), in Java here
 * and in CUDA in {@link #CUDA}, the same function twice. The coordinates are the model's, not a pool's: a token is its
 * position in the prompt (its block in the request's block table and its place in the block) and a head is the model's
 * head, so prefill and decode pools of other block sizes or head shares agree on every word, and a block, token or head
 * put in the wrong place, K swapped with V, a layer mixed up or a stale block of another request all read wrong.
 *
 * <p>The words are splitmix64's finalizer (a bijection) over a sum of odd multiples of the coordinates: distinct
 * coordinates in any range a KV cache has give distinct 64-bit inputs, so each word of a misplaced row differs with
 * probability 1 - 2^-32.
 */
final class KvBlocks {
    private static final long REQUEST = 0x9E3779B97F4A7C15L;
    private static final long LAYER = 0xC2B2AE3D27D4EB4FL;
    private static final long TENSOR = 0x165667B19E3779F9L;
    private static final long TOKEN = 0xD6E8FEB86659FD93L;
    private static final long HEAD = 0xFF51AFD7ED558CCDL;
    private static final long WORD = 0xC4CEB9FE1A85EC53L;

    /** The device twin of {@link #word} and the place of a layer's word {@code i} in a pool, as {@link #place}. */
    static final String CUDA = """
            __device__ __forceinline__ unsigned int kv_word(long long request, int layer, int tensor, int token, int head,
                                                            int word) {
              unsigned long long x = (unsigned long long) request * 0x9E3779B97F4A7C15ull
                  + (unsigned long long) layer * 0xC2B2AE3D27D4EB4Full + (unsigned long long) tensor * 0x165667B19E3779F9ull
                  + (unsigned long long) token * 0xD6E8FEB86659FD93ull + (unsigned long long) head * 0xFF51AFD7ED558CCDull
                  + (unsigned long long) word * 0xC4CEB9FE1A85EC53ull;
              x ^= x >> 30;
              x *= 0xBF58476D1CE4E5B9ull;
              x ^= x >> 27;
              x *= 0x94D049BB133111EBull;
              x ^= x >> 31;
              return (unsigned int) x;
            }

            // Word i of one layer of a request: i runs over tensor, token, head and word of the head's row, in the pool's
            // own order, so that neighbouring threads touch neighbouring words. Returns the word's byte offset in the pool.
            __device__ __forceinline__ long long kv_place(long long tensorBytes, int tensors, const int* blocks, int tokens,
                                                          int tokensPerBlock, int kvHeads, int headWords, int layer,
                                                          long long i, int* tensor, int* token, int* head, int* word) {
              *word = (int) (i % headWords);
              const long long row = i / headWords;
              *head = (int) (row % kvHeads);
              const long long tokenRow = row / kvHeads;
              *token = (int) (tokenRow % tokens);
              *tensor = (int) (tokenRow / tokens);
              const long long headBytes = 4ll * headWords;
              const long long tokenBytes = headBytes * kvHeads;
              const long long blockBytes = tokenBytes * tokensPerBlock;
              return ((long long) layer * tensors + *tensor) * tensorBytes
                  + (long long) blocks[*token / tokensPerBlock] * blockBytes
                  + (long long) (*token % tokensPerBlock) * tokenBytes + (long long) *head * headBytes + 4ll * *word;
            }
            """;

    private KvBlocks() {
    }

    /** The word at (request, layer, tensor, token of the prompt, model head, word of the head's row). */
    static int word(long request, int layer, int tensor, int token, int head, int word) {
        long x = request * REQUEST + layer * LAYER + tensor * TENSOR + token * TOKEN + head * HEAD + word * WORD;
        x ^= x >>> 30;
        x *= 0xBF58476D1CE4E5B9L;
        x ^= x >>> 27;
        x *= 0x94D049BB133111EBL;
        x ^= x >>> 31;
        return (int) x;
    }

    /** Words in one head's row of a token: the head dim's bf16 values, two to a word. */
    static int headWords(KvLayout layout) {
        return (int) (layout.headBytes() / 4);
    }

    /** Where token {@code token} of a request in {@code blocks} starts in tensor {@code tensor} of {@code layer}. */
    static long place(KvLayout layout, int[] blocks, int layer, int tensor, int token) {
        return layout.offset(layer, tensor, blocks[token / layout.tokensPerBlock()])
                + (long) (token % layout.tokensPerBlock()) * layout.tokenBytes();
    }
}
