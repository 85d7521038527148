package org.jccl.examples.embedding;

/**
 * The embedding table: {@link #ROWS} rows of {@link #DIM} floats, each value a function of its row and column, so any
 * process can compute the reference answer. Row {@code id} lives on shard {@code id % shards}; a shard holds only its
 * own rows, in memory.
 */
public final class EmbeddingTable {
    /** Rows in the whole table (ids 0 .. ROWS - 1). */
    public static final int ROWS = 1 << 16;
    /** Floats per row. */
    public static final int DIM = 16;

    private final int shard;
    private final int shards;
    private final float[] rows;

    /** The rows of {@code shard} out of {@code shards}. */
    EmbeddingTable(int shard, int shards) {
        this.shard = shard;
        this.shards = shards;
        int owned = (ROWS - shard + shards - 1) / shards;
        this.rows = new float[owned * DIM];
        for (int local = 0; local < owned; local++) {
            int id = local * shards + shard;
            for (int j = 0; j < DIM; j++) rows[local * DIM + j] = value(id, j);
        }
    }

    /** The reference: element {@code j} of row {@code id}. */
    public static float value(int id, int j) {
        int h = id * 0x9E3779B1 + j * 0x85EBCA77;
        h ^= h >>> 15;
        return (h & 0xFFFF) / 65536f - 0.5f;
    }

    /** The shard that owns row {@code id}. */
    static int shardOf(int id, int shards) {
        return id % shards;
    }

    /** Copies row {@code id} (owned by this shard) into {@code out} at {@code at}. */
    void lookup(int id, float[] out, int at) {
        if (shardOf(id, shards) != shard) throw new IllegalArgumentException("row " + id + " is not on shard " + shard);
        System.arraycopy(rows, (id / shards) * DIM, out, at, DIM);
    }
}
