package org.jccl.core.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A communicator's works admitted and not yet seen complete: what its close drains, its abort fails and its deadline
 * check visits. Admitting a work allocates nothing: the works are linked through fields of their own, by the first
 * communicator that admits each; a work of several communicators (a group across them, a step over them) is held by
 * the others in a set.
 */
final class PendingWorks {
    /** A test of one pending work at a time, under the set's lock: cheap, never blocking. */
    @FunctionalInterface
    interface Selector {
        boolean test(TrackedWork w, long now);
    }

    private @Nullable TrackedWork first; // guarded by this, as the links and the set
    private @Nullable TrackedWork last;
    private final Set<TrackedWork> others = new HashSet<>();
    /** Read without the lock on every round of the event thread. */
    private volatile int count;

    synchronized void add(TrackedWork w) {
        if (w.linkedIn == null) {
            w.linkedIn = this;
            w.pendingPrevious = last;
            w.pendingNext = null;
            if (last == null) first = w;
            else last.pendingNext = w;
            last = w;
        } else if (!others.add(w)) {
            return;
        }
        count++;
    }

    /** Removes {@code w}; false if it was not here (a work's books may be closed by more than one path). */
    synchronized boolean remove(TrackedWork w) {
        if (w.linkedIn != this) {
            if (!others.remove(w)) return false;
        } else {
            TrackedWork previous = w.pendingPrevious;
            TrackedWork next = w.pendingNext;
            if (previous == null) first = next;
            else previous.pendingNext = next;
            if (next == null) last = previous;
            else next.pendingPrevious = previous;
            w.pendingPrevious = null;
            w.pendingNext = null;
            w.linkedIn = null;
        }
        count--;
        return true;
    }

    int size() {
        return count;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** The works {@code selector} accepts, or null if none: nothing is allocated while nothing matches. */
    synchronized @Nullable List<TrackedWork> select(long now, Selector selector) {
        List<TrackedWork> selected = null;
        for (TrackedWork w = first; w != null; w = w.pendingNext) {
            if (selector.test(w, now)) selected = add(selected, w);
        }
        if (others.isEmpty()) return selected; // iterating even an empty set makes an iterator
        for (TrackedWork w : others) {
            if (selector.test(w, now)) selected = add(selected, w);
        }
        return selected;
    }

    /** Every pending work, in no particular order. */
    synchronized List<TrackedWork> snapshot() {
        List<TrackedWork> all = new ArrayList<>(count);
        for (TrackedWork w = first; w != null; w = w.pendingNext) all.add(w);
        all.addAll(others);
        return all;
    }

    private static List<TrackedWork> add(@Nullable List<TrackedWork> list, TrackedWork w) {
        List<TrackedWork> to = list != null ? list : new ArrayList<>();
        to.add(w);
        return to;
    }
}
