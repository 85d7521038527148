package org.jccl.core.engine;

/** A volatile long on a cache line of its own (see {@link OwnLine}). */
final class PaddedLong extends OwnLine {
    private volatile long value;
    @SuppressWarnings("unused")
    private long after1, after2, after3, after4, after5, after6, after7;

    long get() {
        return value;
    }

    void set(long v) {
        value = v;
    }
}
