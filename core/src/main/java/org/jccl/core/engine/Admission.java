package org.jccl.core.engine;

/**
 * A communicator's issue order: its lock (admission runs under it) and its last sequence number, which only issuing
 * threads touch. On a line of its own, so that advancing it on every operation does not take away the line of the
 * state that the launch and event threads read on every operation.
 */
final class Admission extends OwnLine {
    private long sequence;
    @SuppressWarnings("unused")
    private long after1, after2, after3, after4, after5, after6, after7;

    /** The next sequence number; call with this object's lock held. */
    long next() {
        return ++sequence;
    }
}
