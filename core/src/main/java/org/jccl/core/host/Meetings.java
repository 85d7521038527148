package org.jccl.core.host;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.jccl.core.error.SystemErrorException;
import org.jspecify.annotations.Nullable;

/**
 * Meetings of ranks on their launch threads (communicator creation, split, shrink), where blocking is allowed:
 * each participant brings a contribution, the last to arrive computes everyone's result, all leave with theirs.
 * Keyed by a string that every participant derives alike.
 */
final class Meetings {
    private final Map<String, Meeting> meetings = new HashMap<>();

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
     * Joins meeting {@code key} of {@code participants} as {@code member}; returns this member's result.
     *
     * @param decide computes every member's result from all contributions (called once, by the last to arrive)
     */
    Object meet(String key, int participants, int member, long[] contribution,
                Function<Map<Integer, long[]>, Map<Integer, Object>> decide, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            Meeting m = meetings.computeIfAbsent(key, k -> new Meeting(participants));
            if (m.participants != participants) {
                throw new org.jccl.core.error.InvalidUsageException(key + ": " + participants + " participants expected here, "
                        + m.participants + " by another rank");
            }
            if (m.contributions.putIfAbsent(member, contribution) != null) {
                throw new org.jccl.core.error.InvalidUsageException(key + ": member " + member + " joined twice");
            }
            if (m.contributions.size() == participants) {
                m.results = decide.apply(m.contributions);
                notifyAll();
            }
            boolean interrupted = false;
            while (m.results == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    m.contributions.remove(member);
                    if (m.contributions.isEmpty()) meetings.remove(key);
                    throw new SystemErrorException(key + ": only " + (m.contributions.size() + 1) + " of " + participants
                            + " ranks arrived within " + timeout + " (jccl.host.initTimeout)");
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            if (++m.departed == participants) meetings.remove(key);
            return m.results.get(member);
        }
    }
}
