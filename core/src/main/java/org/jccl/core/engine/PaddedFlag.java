package org.jccl.core.engine;

/** A volatile flag on a cache line of its own (see {@link OwnLine}). */
final class PaddedFlag extends OwnLine {
    private volatile boolean value;
    @SuppressWarnings("unused")
    private long after1, after2, after3, after4, after5, after6, after7;

    boolean get() {
        return value;
    }

    void set(boolean v) {
        value = v;
    }
}
