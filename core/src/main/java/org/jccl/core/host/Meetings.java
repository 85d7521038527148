package org.jccl.core.host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.SystemErrorException;
import org.jspecify.annotations.Nullable;

/**
 * Meetings of ranks on their launch threads (communicator creation, split, shrink), where blocking is allowed:
 * each participant brings a contribution, the last to arrive computes everyone's result, all leave with theirs.
 * Keyed by a string that every participant derives alike.
 */
final class Meetings {
    /** How often a waiting member checks whether its meeting was abandoned. */
    private static final long CHECK_NANOS = 20_000_000;
    private final Map<String, Meeting> meetings = new HashMap<>();
    /** Members that closed their communicator: they will not come to a meeting of it any more. */
    private final Set<Integer> left = new HashSet<>();

    private static final class Meeting {
        final int participants;
        final Map<Integer, long[]> contributions = new HashMap<>();
        @Nullable Map<Integer, Object> results;
        int departed;

        Meeting(int participants) {
            this.participants = participants;
        }
    }

    /**
     * The members of {@code 0..participants-1} that have not joined meeting {@code key} yet (all of them when nobody
     * has), for reports on a meeting that takes long.
     */
    synchronized List<Integer> absentees(String key, int participants) {
        Meeting m = meetings.get(key);
        List<Integer> out = new ArrayList<>();
        for (int r = 0; r < participants; r++) if (m == null || !m.contributions.containsKey(r)) out.add(r);
        return out;
    }

    /** {@code member} closed its communicator; meetings waiting for it fail instead of waiting out the timeout. */
    synchronized void leave(int member) {
        left.add(member);
        notifyAll();
    }

    /** {@link #meet(String, int, int, long[], Function, Duration, IntPredicate, Supplier)} that nothing abandons. */
    Object meet(String key, int participants, int member, long[] contribution,
                Function<Map<Integer, long[]>, Map<Integer, Object>> decide, Duration timeout) {
        return meet(key, participants, member, contribution, decide, timeout, m -> false, () -> null);
    }

    /**
     * Joins meeting {@code key} of {@code participants} as {@code member}; returns this member's result. A waiting
     * member gives up — with the meeting left as if it never came — when a member it needs ({@code expected}) left,
     * or when {@code failed} gives a reason (the communicator was poisoned), or after {@code timeout}.
     *
     * @param decide computes every member's result from all contributions (called once, by the last to arrive)
     */
    Object meet(String key, int participants, int member, long[] contribution,
                Function<Map<Integer, long[]>, Map<Integer, Object>> decide, Duration timeout, IntPredicate expected,
                Supplier<@Nullable RuntimeException> failed) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            Meeting m = meetings.computeIfAbsent(key, k -> new Meeting(participants));
            if (m.participants != participants) {
                throw new InvalidUsageException(key + ": " + participants + " participants expected here, "
                        + m.participants + " by another rank");
            }
            if (m.contributions.putIfAbsent(member, contribution) != null) {
                throw new InvalidUsageException(key + ": member " + member + " joined twice");
            }
            if (m.contributions.size() == participants) {
                m.results = decide.apply(m.contributions);
                notifyAll();
            }
            boolean interrupted = false;
            while (m.results == null) {
                long remaining = deadline - System.nanoTime();
                RuntimeException abandoned = failed.get();
                if (abandoned == null) abandoned = absentee(key, m, expected);
                if (abandoned == null && remaining <= 0) {
                    abandoned = new SystemErrorException(key + ": only " + m.contributions.size() + " of " + participants
                            + " ranks arrived within " + timeout + " (jccl.host.initTimeout)");
                }
                if (abandoned != null) {
                    m.contributions.remove(member);
                    if (m.contributions.isEmpty()) meetings.remove(key);
                    throw abandoned;
                }
                try {
                    wait(Math.max(1, Math.min(remaining, CHECK_NANOS) / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            if (++m.departed == participants) meetings.remove(key);
            return m.results.get(member);
        }
    }

    /** Why the meeting cannot complete: an expected member that has not come closed its communicator. */
    private @Nullable RuntimeException absentee(String key, Meeting m, IntPredicate expected) {
        for (int r : left) {
            if (expected.test(r) && !m.contributions.containsKey(r)) {
                return new InvalidUsageException(key + ": rank " + r + " closed the communicator instead of joining");
            }
        }
        return null;
    }
}
