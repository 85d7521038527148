package org.jccl.core.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.jccl.core.DataType;
import org.jccl.core.matrix.Reference;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The reduction kernels against the plain {@link Reference} (which shares no code with them), for every element
 * type and reduction: more than one {@link Scratch#BLOCK} of elements, so block offsets count; every rank's buffer
 * at its own offset, aligned and misaligned for the element width, so both the bulk and the element-by-element
 * paths run; a PreMulSum scalar other than one on every rank, given on the host and in memory; two destinations,
 * with and without a bias each; and the bytes around every destination left as they were.
 */
class ReducerTest {
    private static final int RANKS = 4;
    /** Crosses a block boundary; odd, so the last block is short. */
    private static final int COUNT = Scratch.BLOCK + 37;
    private static final int DESTINATIONS = 2;
    private static final byte SENTINEL = 0x5A;

    private final List<HostMemoryBlock> blocks = new ArrayList<>();

    @AfterEach
    void freeBlocks() {
        for (HostMemoryBlock b : blocks) b.release();
    }

    private HostMemoryBlock block(int bytes) {
        HostMemoryBlock b = HostMemoryBlock.allocate(bytes, MemoryKind.DEVICE);
        blocks.add(b);
        return b;
    }

    /** A reduction as the tests vary it: PreMulSum with its scalar on the host or in memory. */
    private enum Variant {
        SUM(Reference.Kind.SUM), PROD(Reference.Kind.PROD), MAX(Reference.Kind.MAX), MIN(Reference.Kind.MIN),
        AVG(Reference.Kind.AVG), PREMUL_HOST(Reference.Kind.PREMUL_SUM), PREMUL_MEMORY(Reference.Kind.PREMUL_SUM);

        final Reference.Kind kind;

        Variant(Reference.Kind kind) {
            this.kind = kind;
        }
    }

    /** Rank {@code r}'s PreMulSum scalar: never one, exact in every floating type. */
    private static double scalar(DataType t, int r) {
        return t.isFloatingPoint() ? new double[] {0.5, 1.5, 2, 0.25}[r] : r + 2;
    }

    private static ByteBuffer values(DataType t, long seed) {
        Random random = new Random(seed);
        ByteBuffer b = Reference.allocate(t, COUNT);
        for (int i = 0; i < COUNT; i++) {
            // Small quarter steps stay exact and in range in fp8 through four ranks of products.
            if (t.isFloatingPoint()) Reference.putFloat(t, b, i, (random.nextInt(17) - 8) * 0.25);
            else Reference.putLong(t, b, i, random.nextLong());
        }
        return b;
    }

    /** {@code contents} at byte {@code offset} of a new block with sentinel bytes before and after it. */
    private HostMemoryBlock placed(ByteBuffer contents, int offset) {
        HostMemoryBlock b = block(offset + contents.capacity() + 16);
        ByteBuffer all = b.bytes().duplicate();
        for (int i = 0; i < all.capacity(); i++) all.put(i, SENTINEL);
        all.put(offset, contents, 0, contents.capacity());
        return b;
    }

    private static byte[] bytesOf(HostMemoryBlock b) {
        byte[] out = new byte[(int) b.size()];
        b.bytes().duplicate().get(0, out);
        return out;
    }

    private Reduction reduction(DataType t, Variant v, int rank) {
        return switch (v) {
            case SUM -> Reduction.builtIn(Reduction.Kind.SUM);
            case PROD -> Reduction.builtIn(Reduction.Kind.PROD);
            case MAX -> Reduction.builtIn(Reduction.Kind.MAX);
            case MIN -> Reduction.builtIn(Reduction.Kind.MIN);
            case AVG -> Reduction.builtIn(Reduction.Kind.AVG);
            case PREMUL_HOST -> new Reduction(Reduction.Kind.PREMUL_SUM, scalar(t, rank), null, 0);
            case PREMUL_MEMORY -> {
                ByteBuffer s = Reference.allocate(t, 1);
                if (t.isFloatingPoint()) Reference.putFloat(t, s, 0, scalar(t, rank));
                else Reference.putLong(t, s, 0, (long) scalar(t, rank));
                int offset = 3 + rank; // the scalar need not be aligned either
                yield new Reduction(Reduction.Kind.PREMUL_SUM, 0, placed(s, offset), offset);
            }
        };
    }

    @ParameterizedTest
    @EnumSource(DataType.class)
    void alignedBuffersMatchTheReference(DataType t) {
        for (Variant v : Variant.values()) check(t, v, false);
    }

    @ParameterizedTest
    @EnumSource(DataType.class)
    void misalignedBuffersMatchTheReference(DataType t) {
        for (Variant v : Variant.values()) check(t, v, true);
    }

    private void check(DataType t, Variant v, boolean misaligned) {
        int size = t.size();
        // Each buffer at its own offset: whole elements apart when aligned, an odd byte count when not.
        java.util.function.IntUnaryOperator offset = k -> misaligned ? 8 * k + 1 + 2 * (k % 3) : 8 * k * size;
        ByteBuffer[] inputs = new ByteBuffer[RANKS];
        HostMemoryBlock[] srcs = new HostMemoryBlock[RANKS];
        int[] srcOff = new int[RANKS];
        Reduction[] r = new Reduction[RANKS];
        double[] scalars = new double[RANKS];
        for (int k = 0; k < RANKS; k++) {
            inputs[k] = values(t, 31L * t.ordinal() + 7L * v.ordinal() + k);
            srcOff[k] = offset.applyAsInt(k);
            srcs[k] = placed(inputs[k], srcOff[k]);
            r[k] = reduction(t, v, k);
            scalars[k] = scalar(t, k);
        }
        ByteBuffer reduced = Reference.allocate(t, COUNT);
        for (int i = 0; i < COUNT; i++) Reference.reduce(t, v.kind, scalars, inputs, i, reduced, i);

        for (boolean withBias : new boolean[] {false, true}) {
            HostMemoryBlock[] dsts = new HostMemoryBlock[DESTINATIONS];
            int[] dstOff = new int[DESTINATIONS];
            HostMemoryBlock @Nullable [] biases = withBias ? new HostMemoryBlock[DESTINATIONS] : null;
            int[] biasOff = new int[DESTINATIONS];
            byte[][] expected = new byte[DESTINATIONS][];
            for (int d = 0; d < DESTINATIONS; d++) {
                dstOff[d] = offset.applyAsInt(RANKS + d);
                dsts[d] = placed(Reference.allocate(t, COUNT), dstOff[d]);
                ByteBuffer result = reduced;
                if (biases != null) {
                    ByteBuffer bias = values(t, 1000L + 31L * t.ordinal() + d);
                    biasOff[d] = offset.applyAsInt(RANKS + DESTINATIONS + d);
                    biases[d] = placed(bias, biasOff[d]);
                    result = Reference.allocate(t, COUNT);
                    for (int i = 0; i < COUNT; i++) Reference.applyBias(t, v.kind, reduced, bias, i, result);
                }
                expected[d] = bytesOf(placed(result, dstOff[d]));
            }
            Reducer.reduce(t, r, RANKS, srcs, srcOff, DESTINATIONS, dsts, dstOff, biases, biasOff, COUNT);
            for (int d = 0; d < DESTINATIONS; d++) {
                assertArrayEquals(expected[d], bytesOf(dsts[d]), () -> t + " " + v + (misaligned ? " misaligned" : "")
                        + (withBias ? " with bias" : "") + ": destination differs from the reference");
            }
        }
    }
}
