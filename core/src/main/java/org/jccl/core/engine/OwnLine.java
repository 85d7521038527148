package org.jccl.core.engine;

/**
 * Padding that gives a subclass's fields cache lines of their own. A field that one thread writes on every operation
 * slows every other thread that reads anything on its cache line: each write takes the line from the readers, and
 * each read brings it back (about 175 ns per transfer between two cores of the GPU host, 2026-11-25). The JVM lays
 * out a superclass's fields before its subclass's, so these 64 bytes come before the subclass's fields whatever object
 * lies in front; a subclass ends with 56 bytes of padding of its own for whatever lies behind.
 */
abstract class OwnLine {
    @SuppressWarnings("unused")
    private long before1, before2, before3, before4, before5, before6, before7, before8;
}
