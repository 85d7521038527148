package org.jccl.core.host;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.jccl.core.thread.Backoff;

/**
 * Where the ranks of a {@link LocalClique} meet: the last rank to arrive releases the others by unparking them, so a
 * waiting rank leaves as soon as its peers are all there, however long it would have parked.
 */
final class RankBarrier {
    private final int size;
    private final Backoff backoff;
    /**
     * The thread each rank last arrived on, made known before it counts its arrival. Apart from the clique's
     * send/receive threads: a rank may wait here on one stream while it receives on another, and a wake-up meant for
     * one must not go to the other.
     */
    private final AtomicReferenceArray<Thread> arrivals;
    private final AtomicInteger arrived = new AtomicInteger();
    /** For each rank, one more than the generation it last arrived in: who is missing from a generation. */
    private final AtomicLongArray arrivedIn;
    private volatile long generation;

    /**
     * @param size    the number of ranks that meet
     * @param backoff how a waiting rank waits before and between parks
     */
    RankBarrier(int size, Backoff backoff) {
        this.size = size;
        this.backoff = backoff;
        this.arrivals = new AtomicReferenceArray<>(size);
        this.arrivedIn = new AtomicLongArray(size);
    }

    /**
     * Returns once every rank has arrived. The last one runs {@code onRelease} before it lets the others go (so they
     * see its effects). A waiting rank runs {@code check} before each pause; what it throws ends the wait (the clique
     * failed: the barrier is not used again).
     */
    void await(int rank, Runnable onRelease, Runnable check) {
        long g = generation;
        arrivals.set(rank, Thread.currentThread());
        arrivedIn.set(rank, g + 1);
        if (arrived.incrementAndGet() == size) {
            arrived.set(0);
            onRelease.run();
            generation = g + 1;
            for (int i = 0; i < size; i++) {
                Thread t = arrivals.get(i);
                if (i != rank && t != null) LockSupport.unpark(t);
            }
            return;
        }
        for (Backoff.Waiter wait = backoff.startWoken(); generation == g; ) {
            check.run();
            wait.pause();
        }
    }

    /**
     * The ranks that have not arrived where {@code rank} waits, in rank order; empty when {@code rank} waits here for
     * nobody (the generation it arrived in was released). Any thread: a report, which may be a moment old.
     */
    List<Integer> absentees(int rank) {
        long g = arrivedIn.get(rank) - 1;
        List<Integer> missing = new ArrayList<>();
        if (g < 0 || generation != g) return missing;
        for (int i = 0; i < size; i++) if (arrivedIn.get(i) != g + 1) missing.add(i);
        return missing;
    }

    /** Unparks every rank that may wait here, so that each runs its check (the clique was poisoned). */
    void wakeAll() {
        for (int i = 0; i < size; i++) {
            Thread t = arrivals.get(i);
            if (t != null) LockSupport.unpark(t);
        }
    }
}
