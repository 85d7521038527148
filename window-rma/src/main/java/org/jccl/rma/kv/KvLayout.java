package org.jccl.rma.kv;

import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * How one rank lays out its paged KV-cache pool: for each of {@code layers} layers, {@code tensors} tensors (2 for
 * separate K and V, 1 for one combined tensor), each {@code [blocks, tokensPerBlock, kvHeads, headDim]} of
 * {@code type}, row-major, the tensors of a layer one after the other and the layers one after the other. The rank
 * holds the model's KV heads {@code [headOffset, headOffset + kvHeads)}: with tensor parallelism each rank holds a
 * share of them.
 *
 * <p>Prefill and decode may differ in {@code blocks}, {@code tokensPerBlock} and their head share; they must agree on
 * {@code layers}, {@code tensors}, {@code headDim} and {@code type}, and a decode rank's heads must lie inside its
 * prefill rank's. Llama-3-8B in bf16 with 16-token blocks: {@code KvLayout.builder().layers(32).blocks(n)
 * .tokensPerBlock(16).kvHeads(8).headDim(128).type(DataType.BFLOAT16).build()}, 32 KiB per block and tensor.
 *
 * @param layers         transformer layers, each with its own tensors
 * @param tensors        1 or 2 tensors per layer (K and V)
 * @param blocks         blocks in the pool, numbered {@code 0..blocks-1}
 * @param tokensPerBlock tokens a block holds
 * @param kvHeads        KV heads this rank holds
 * @param headDim        elements per head
 * @param type           the element type
 * @param headOffset     the first of the model's KV heads this rank holds
 */
public record KvLayout(int layers, int tensors, int blocks, int tokensPerBlock, int kvHeads, int headDim, DataType type,
                       int headOffset) {
    public KvLayout {
        Errors.requireArgument(type, "type");
        positive(layers, "layers");
        if (tensors != 1 && tensors != 2) throw new InvalidArgumentException("tensors must be 1 or 2 (K and V), not " + tensors);
        positive(blocks, "blocks");
        positive(tokensPerBlock, "tokensPerBlock");
        positive(kvHeads, "kvHeads");
        positive(headDim, "headDim");
        if (headOffset < 0) throw new InvalidArgumentException("headOffset must not be negative, not " + headOffset);
        long pool = Errors.exactProduct(Errors.exactProduct(Errors.exactProduct(layers, tensors, "layers × tensors"),
                blocks, "× blocks"), Errors.exactProduct((long) tokensPerBlock * kvHeads, (long) headDim * type.size(),
                "block bytes"), "pool bytes");
        if (pool <= 0) throw new InvalidArgumentException("an empty pool");
    }

    private static void positive(int value, String name) {
        if (value <= 0) throw new InvalidArgumentException(name + " must be positive, not " + value);
    }

    /** Bytes of one token's row in one tensor: its heads × head dim × element size. */
    public long tokenBytes() {
        return (long) kvHeads * headDim * type.size();
    }

    /** Bytes of one head of one token. */
    public long headBytes() {
        return (long) headDim * type.size();
    }

    /** Bytes of one block of one tensor. */
    public long blockBytes() {
        return tokensPerBlock * tokenBytes();
    }

    /** Bytes of one tensor of one layer (every block). */
    public long tensorBytes() {
        return blocks * blockBytes();
    }

    /** Bytes of the whole pool. */
    public long poolBytes() {
        return (long) layers * tensors * tensorBytes();
    }

    /** Where block {@code block} of tensor {@code tensor} of layer {@code layer} starts in the pool. */
    public long offset(int layer, int tensor, int block) {
        return ((long) layer * tensors + tensor) * tensorBytes() + block * blockBytes();
    }

    /** The blocks {@code tokens} tokens take. */
    public int blocksFor(int tokens) {
        return (tokens + tokensPerBlock - 1) / tokensPerBlock;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a layout; K and V tensors and head offset 0 unless set. */
    public static final class Builder {
        private int layers;
        private int tensors = 2;
        private int blocks;
        private int tokensPerBlock;
        private int kvHeads;
        private int headDim;
        private DataType type = DataType.BFLOAT16;
        private int headOffset;

        private Builder() {
        }

        public Builder layers(int layers) {
            this.layers = layers;
            return this;
        }

        public Builder tensors(int tensors) {
            this.tensors = tensors;
            return this;
        }

        public Builder blocks(int blocks) {
            this.blocks = blocks;
            return this;
        }

        public Builder tokensPerBlock(int tokensPerBlock) {
            this.tokensPerBlock = tokensPerBlock;
            return this;
        }

        public Builder kvHeads(int kvHeads) {
            this.kvHeads = kvHeads;
            return this;
        }

        public Builder headDim(int headDim) {
            this.headDim = headDim;
            return this;
        }

        public Builder type(DataType type) {
            this.type = type;
            return this;
        }

        public Builder headOffset(int headOffset) {
            this.headOffset = headOffset;
            return this;
        }

        public KvLayout build() {
            return new KvLayout(layers, tensors, blocks, tokensPerBlock, kvHeads, headDim, type, headOffset);
        }
    }
}
