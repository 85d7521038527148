package org.jccl.core.host;

import java.util.concurrent.locks.LockSupport;

/**
 * How a rank waits for its peers: spin a little (a peer on another core answers in microseconds), then yield,
 * then park for growing intervals; whoever makes the awaited change unparks the waiter, the interval only bounds
 * a missed wake-up. With more ranks than cores, long spinning would steal the CPU the peers need.
 */
final class Waiting {
    private static final int SPINS = 200;
    private static final int YIELDS = 20;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private Waiting() {
    }

    /** One step of waiting; {@code round} counts the caller's unsuccessful checks so far. */
    static void pause(int round) {
        if (round < SPINS) {
            Thread.onSpinWait();
        } else if (round < SPINS + YIELDS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(Waiting.class, Math.min(MAX_PARK_NANOS, 10_000L << Math.min(7, (round - SPINS - YIELDS) / 4)));
        }
    }
}
