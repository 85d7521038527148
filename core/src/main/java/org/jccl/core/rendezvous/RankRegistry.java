package org.jccl.core.rendezvous;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which ranks are connected and which died. A rank can be held by one live connection at a time; a connection that
 * ends without saying LEAVE (killed process, lost network, heartbeats stopped) makes its rank dead. A dead or departed
 * rank may be claimed again (a restarted process). Mutated on the server's event-loop thread only; the snapshots are
 * immutable copies that any thread may read.
 */
final class RankRegistry {
    private final Map<Integer, Object> owners = new HashMap<>();
    private final Set<Integer> dead = new TreeSet<>();
    private volatile Set<Integer> liveSnapshot = Set.of();
    private volatile Set<Integer> deadSnapshot = Set.of();

    /** @return whether the rank was free and now belongs to owner */
    boolean claim(int rank, Object owner) {
        if (owners.containsKey(rank)) return false;
        owners.put(rank, owner);
        dead.remove(rank);
        publish();
        return true;
    }

    /**
     * Releases the rank if owner holds it.
     *
     * @param clean whether the owner said LEAVE first; otherwise the rank is dead
     * @return whether the rank became dead
     */
    boolean release(int rank, Object owner, boolean clean) {
        if (owners.get(rank) != owner) return false;
        owners.remove(rank);
        if (!clean) dead.add(rank);
        publish();
        return !clean;
    }

    Set<Integer> live() {
        return liveSnapshot;
    }

    Set<Integer> dead() {
        return deadSnapshot;
    }

    private void publish() {
        liveSnapshot = Collections.unmodifiableSortedSet(new TreeSet<>(owners.keySet()));
        deadSnapshot = Collections.unmodifiableSortedSet(new TreeSet<>(dead));
    }
}
