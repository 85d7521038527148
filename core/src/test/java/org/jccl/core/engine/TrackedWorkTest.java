package org.jccl.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.spi.MemoryBlock;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** A work's deadline from its timeout: zero or less is none, a huge one saturates instead of wrapping. */
class TrackedWorkTest {
    private static TrackedWork work(long timeoutNanos) {
        return new TrackedWork(1, new MemoryBlock[0], timeoutNanos) {
            @Override
            public String describe() {
                return "work";
            }
        };
    }

    @Test
    void zeroOrANegativeTimeoutMeansNoDeadline() {
        for (long none : new long[] {0, -1, Long.MIN_VALUE}) {
            TrackedWork w = work(none);
            assertEquals(Long.MAX_VALUE, w.deadlineNanos(), "timeout " + none);
            assertEquals(Duration.ZERO, w.timeout(), "timeout " + none);
        }
    }

    @Test
    void aTimeoutIsCountedFromCreation() {
        long before = System.nanoTime();
        TrackedWork w = work(1_000_000_000L);
        long after = System.nanoTime();
        assertTrue(w.deadlineNanos() - before >= 1_000_000_000L && w.deadlineNanos() - after <= 1_000_000_000L,
                "deadline " + w.deadlineNanos() + " is one second after creation");
        assertEquals(Duration.ofSeconds(1), w.timeout());
    }

    @Test
    void aTimeoutPastTheEndOfTheClockSaturates() {
        for (long huge : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - System.nanoTime() + 1}) {
            TrackedWork w = work(huge);
            assertEquals(Long.MAX_VALUE, w.deadlineNanos(), "timeout " + huge + " must not wrap to the past");
            assertEquals(Duration.ofNanos(huge), w.timeout());
        }
    }

    @Test
    void aWorkCompletesOnceWhicheverOutcomeComesFirst() {
        TrackedWork succeeded = work(0);
        assertTrue(succeeded.succeed());
        assertFalse(succeeded.fail(new IllegalStateException("late")), "a late failure changes nothing");
        assertFalse(succeeded.isCompletedExceptionally());
        TrackedWork failed = work(0);
        assertTrue(failed.fail(new IllegalStateException("timed out")));
        assertFalse(failed.succeed(), "the event completing after a timeout is no success");
        assertFalse(failed.fail(new IllegalStateException("again")));
        assertTrue(failed.isCompletedExceptionally());
    }

    @Test
    void aTimeoutIsReportedOnce() {
        TrackedWork w = work(1);
        assertTrue(w.markTimeoutReported());
        assertFalse(w.markTimeoutReported());
    }

    @Test
    void onlyTheCompletionThatSettlesAWorkTellsItsObserversWithItsOutcome() {
        List<String> told = new ArrayList<>();
        TrackedWork w = new TrackedWork(1, new MemoryBlock[0], 0) {
            @Override
            public String describe() {
                return "work";
            }

            @Override
            protected void completing(@Nullable Throwable error) {
                told.add(error == null ? "done" : error.getMessage());
            }
        };
        assertTrue(w.fail(new IllegalStateException("timed out")));
        assertFalse(w.succeed());
        assertFalse(w.fail(new IllegalStateException("aborted")));
        assertEquals(List.of("timed out"), told);
    }
}
