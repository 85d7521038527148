package org.jccl.core.thread;

import java.util.concurrent.locks.LockSupport;
import org.jccl.core.config.JcclSettings;

/**
 * The one way jccl's threads wait for something expected soon: busy-poll for {@code spin} after the last progress
 * (a GPU round trip or a peer's answer takes microseconds; waking a parked thread would cost as much), then yield
 * until {@code yield}, then park for growing intervals up to {@code maxPark}. Whoever makes the awaited progress
 * unparks the waiter, so the interval only bounds a missed wake-up; a wait that is always woken
 * ({@link #startWoken()}) parks for {@code maxPark} at once. Threads that can wait for a wake-up alone (the event
 * thread with nothing pending, an idle launch queue or host stream) park without a timeout once {@link #isIdle}
 * says so.
 *
 * @param spinNanos    busy-poll time after the last progress
 * @param yieldNanos   time after the last progress until which the thread yields instead of parking
 * @param maxParkNanos the longest single park
 */
public record Backoff(long spinNanos, long yieldNanos, long maxParkNanos) {
    private static final long SPIN = JcclSettings.SPIN.duration().toNanos();

    /**
     * The event and launch threads ({@code jccl.spin}, {@code jccl.maxPollInterval}). They yield until 1 ms after
     * the last activity: a timed park sleeps at least the kernel's timer slack (about 50 µs), too coarse while GPU
     * work of a few hundred microseconds completes back to back.
     */
    public static final Backoff ENGINE = new Backoff(SPIN, Math.max(SPIN * 4, 1_000_000),
            Math.max(1_000, JcclSettings.MAX_POLL_INTERVAL.duration().toNanos()));

    /**
     * Host-backend ranks waiting on the network (frames of other processes, room to send): ranks may outnumber
     * cores, so spinning is short.
     */
    public static final Backoff HOST_PEERS = new Backoff(20_000, 60_000, 1_000_000);

    /**
     * Host-backend streams, and ranks of one JVM waiting for each other (whoever they wait for unparks them, see
     * {@link #startWoken()}). They yield for as long as the engine's threads do, 1 ms after the last progress: a
     * round trip passes through every rank's stream, so a stream that parked sooner would be parked at each next
     * operation and cost a wake-up on the critical path every time. They spin only where the machine has a core for
     * each busy thread (8 or more; never longer than {@code jccl.spin}): with fewer, a spinning thread holds the
     * core that the thread it waits for needs. A park lasts at most 10 ms, a bound for a missed wake-up only.
     */
    public static final Backoff HOST_RANKS = new Backoff(
            Runtime.getRuntime().availableProcessors() >= 8 ? Math.min(SPIN, 20_000) : 0, 1_000_000, 10_000_000);

    /** A launch thread polling a non-blocking library call until it is no longer in progress. */
    public static final Backoff LIBRARY_CALL = new Backoff(5_000, 20_000, 100_000);

    /** Waits a little, according to how long ago the last progress was; returns at once after an unpark. */
    public void pause(long idleNanos) {
        if (idleNanos < spinNanos) {
            Thread.onSpinWait();
        } else if (idleNanos < yieldNanos) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(this, Math.min(maxParkNanos, 1_000 + (idleNanos - yieldNanos) / 8));
        }
    }

    /** Whether a thread idle this long has stopped spinning and yielding (may park until woken). */
    public boolean isIdle(long idleNanos) {
        return idleNanos >= yieldNanos;
    }

    /**
     * A wait that starts now, for a condition nobody signals reliably (a network future): parks begin short and grow.
     * {@link Waiter#pause()} once per unsuccessful check of the awaited condition.
     */
    public Waiter start() {
        return new Waiter(this, Waiter.FIRST_PARK_NANOS);
    }

    /**
     * A wait that starts now, for a condition whose maker unparks the waiting thread (a peer rank arriving, a send
     * being consumed): once it stops yielding it parks for {@code maxPark} at once, so how soon it wakes depends only
     * on the wake-up, never on park lengths. The waiter must make itself known to the maker before it first checks
     * the condition.
     */
    public Waiter startWoken() {
        return new Waiter(this, maxParkNanos);
    }

    /**
     * One wait. Parks grow with the number of parks, not with the time waited: among more runnable threads than
     * cores a single yield can take a whole time slice, and park lengths derived from elapsed time would then jump
     * to their cap at once, so that a peer's answer a few microseconds later went unseen for hundreds of them.
     */
    public static final class Waiter {
        private static final long FIRST_PARK_NANOS = 10_000;
        private final Backoff backoff;
        private final long start;
        private final long firstPark;
        private int parks;

        private Waiter(Backoff backoff, long firstPark) {
            this.backoff = backoff;
            this.start = System.nanoTime();
            this.firstPark = Math.min(firstPark, backoff.maxParkNanos);
        }

        /** Waits a little: spin, then yield, then park the first park's length, doubling every 4 parks up to the cap. */
        public void pause() {
            long idle = System.nanoTime() - start;
            if (idle < backoff.spinNanos) {
                Thread.onSpinWait();
            } else if (idle < backoff.yieldNanos) {
                Thread.yield();
            } else {
                int doublings = Math.min(16, parks++ / 4);
                long park = firstPark > backoff.maxParkNanos >>> doublings ? backoff.maxParkNanos : firstPark << doublings;
                LockSupport.parkNanos(backoff, park);
            }
        }

        /** Whether the wait has reached its parking phase (so whoever makes progress should unpark it). */
        public boolean isParking() {
            return System.nanoTime() - start >= backoff.spinNanos;
        }
    }
}
