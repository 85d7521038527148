package org.jccl.core.engine;

import java.util.concurrent.locks.LockSupport;
import org.jccl.core.config.JcclSettings;

/**
 * How jccl's own threads wait while they expect more work soon: busy-poll for the spin period after the last
 * activity (a GPU round trip is tens of microseconds: waking a parked thread would cost as much), then yield, then
 * park for growing intervals up to a cap. Threads with nothing pending park without a timeout instead.
 */
public final class Backoff {
    public static final long SPIN_NANOS = JcclSettings.SPIN.duration().toNanos();
    /**
     * How long after the last activity the threads only yield (stay responsive) before they sleep. A timed park
     * sleeps at least the kernel's timer slack (about 50 us), too coarse while GPU work of a few hundred
     * microseconds completes back to back.
     */
    public static final long YIELD_NANOS = Math.max(SPIN_NANOS * 4, 1_000_000);
    public static final long MAX_PARK_NANOS = Math.max(1_000, JcclSettings.MAX_POLL_INTERVAL.duration().toNanos());

    private Backoff() {
    }

    /** Waits a little, according to how long ago the last activity was; returns at once after a wake-up. */
    static void pause(long idleNanos) {
        if (idleNanos < SPIN_NANOS) {
            Thread.onSpinWait();
        } else if (idleNanos < YIELD_NANOS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(Math.min(MAX_PARK_NANOS, 1_000 + (idleNanos - YIELD_NANOS) / 8));
        }
    }
}
