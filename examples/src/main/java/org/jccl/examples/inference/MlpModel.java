package org.jccl.examples.inference;

/**
 * A small deterministic MLP, its weights a function of the seed and their position: a block
 * {@code y = relu(x·A)·B} ({@code A}: IN × HIDDEN, {@code B}: HIDDEN × IN) and a head {@code z = y·C}
 * ({@code C}: IN × OUT). Tensor-parallel over {@code n} ranks, Megatron style: rank {@code r} holds the columns
 * {@code r·HIDDEN/n ..} of {@code A} and the same rows of {@code B} (column- then row-parallel: each rank's partial
 * {@code y} is summed by an all-reduce), and the columns {@code r·OUT/n ..} of {@code C} (column-parallel: the
 * ranks' parts of {@code z} are joined by an all-gather). {@link #reference} is the whole model in one process.
 */
public final class MlpModel {
    /** Input and block width. */
    public static final int IN = 64;
    /** Hidden width (divided among the ranks). */
    public static final int HIDDEN = 256;
    /** Output width (divided among the ranks). */
    public static final int OUT = 32;

    private final int hiddenPart;
    private final int outPart;
    private final float[] a;
    private final float[] b;
    private final float[] c;

    /** Rank {@code rank}'s shard of the model of {@code seed} over {@code ranks} ranks. */
    MlpModel(long seed, int rank, int ranks) {
        if (HIDDEN % ranks != 0 || OUT % ranks != 0) {
            throw new IllegalArgumentException("the ranks (" + ranks + ") must divide " + HIDDEN + " and " + OUT);
        }
        hiddenPart = HIDDEN / ranks;
        outPart = OUT / ranks;
        a = new float[IN * hiddenPart];
        b = new float[hiddenPart * IN];
        c = new float[IN * outPart];
        for (int i = 0; i < IN; i++) {
            for (int k = 0; k < hiddenPart; k++) a[i * hiddenPart + k] = weight(seed, 0, i, rank * hiddenPart + k, IN);
        }
        for (int k = 0; k < hiddenPart; k++) {
            for (int j = 0; j < IN; j++) b[k * IN + j] = weight(seed, 1, rank * hiddenPart + k, j, HIDDEN);
        }
        for (int j = 0; j < IN; j++) {
            for (int o = 0; o < outPart; o++) c[j * outPart + o] = weight(seed, 2, j, rank * outPart + o, IN);
        }
    }

    /** Weight {@code (row, column)} of {@code layer}: uniform in ±1/√fanIn, from a hash of its position. */
    static float weight(long seed, int layer, int row, int column, int fanIn) {
        long h = seed * 0x9E3779B97F4A7C15L + layer * 0xC2B2AE3D27D4EB4FL + row * 0x165667B19E3779F9L + column * 0x27D4EB2F165667C5L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        return (float) (((h >>> 40) / (double) (1 << 24) * 2 - 1) / Math.sqrt(fanIn));
    }

    /** This rank's partial block output for {@code batch} inputs ({@code batch × IN}): relu(x·A_r)·B_r. */
    float[] partialBlock(float[] x, int batch) {
        float[] y = new float[batch * IN];
        float[] h = new float[hiddenPart];
        for (int s = 0; s < batch; s++) {
            for (int k = 0; k < hiddenPart; k++) {
                float sum = 0;
                for (int i = 0; i < IN; i++) sum += x[s * IN + i] * a[i * hiddenPart + k];
                h[k] = Math.max(0, sum);
            }
            for (int j = 0; j < IN; j++) {
                float sum = 0;
                for (int k = 0; k < hiddenPart; k++) sum += h[k] * b[k * IN + j];
                y[s * IN + j] = sum;
            }
        }
        return y;
    }

    /** This rank's columns of the head for the summed block output {@code y}: {@code batch × OUT/n}. */
    float[] headPart(float[] y, int batch) {
        float[] z = new float[batch * outPart];
        for (int s = 0; s < batch; s++) {
            for (int o = 0; o < outPart; o++) {
                float sum = 0;
                for (int j = 0; j < IN; j++) sum += y[s * IN + j] * c[j * outPart + o];
                z[s * outPart + o] = sum;
            }
        }
        return z;
    }

    /** Columns of the head per rank. */
    int outPart() {
        return outPart;
    }

    /** Hidden units per rank. */
    int hiddenPart() {
        return hiddenPart;
    }

    /** This rank's columns of {@code A}, row-major {@code IN × hiddenPart} (shared, not copied). */
    float[] shardA() {
        return a;
    }

    /** This rank's rows of {@code B}, row-major {@code hiddenPart × IN} (shared, not copied). */
    float[] shardB() {
        return b;
    }

    /** This rank's columns of {@code C}, row-major {@code IN × outPart} (shared, not copied). */
    float[] shardC() {
        return c;
    }

    /** The whole model of {@code seed} in one process, the reference answers are checked against. */
    public static MlpModel reference(long seed) {
        return new MlpModel(seed, 0, 1);
    }

    /** The whole model's {@link #OUT} outputs for the {@link #IN} inputs {@code x}. */
    public float[] forward(float[] x) {
        if (outPart != OUT) throw new IllegalStateException("a shard computes part of the model; use reference(seed)");
        return headPart(partialBlock(x, 1), 1);
    }
}
