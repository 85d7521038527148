package org.jccl.core.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.jfr.JfrEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the event thread: a callback that holds it longer than {@code jccl.eventThread.stallWarning} delays
 * every completion, deadline and async-error check of the process, so it is logged once per stall with the event
 * thread's stack (where the callback is stuck), counted and recorded as a JFR {@code jccl.EventThreadStall}. Checks twice per threshold; {@code 0} disables.
 */
final class StallWatchdog implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(StallWatchdog.class);

    private final EventLoop loop;
    private final AtomicLong stalls = new AtomicLong();
    private long reported;

    StallWatchdog(EventLoop loop) {
        this.loop = loop;
        Thread t = new Thread(this, "jccl-event-watchdog");
        t.setDaemon(true);
        t.start();
    }

    long stalls() {
        return stalls.get();
    }

    @Override
    public void run() {
        while (true) {
            Duration threshold = threshold();
            long limit = threshold.toNanos();
            LockSupport.parkNanos(this, limit > 0 ? Math.max(limit / 2, 1_000_000) : 1_000_000_000L);
            if (limit <= 0) continue;
            long since = loop.completingSince();
            if (since == 0 || since == reported || System.nanoTime() - since < limit) continue;
            reported = since;
            stalls.incrementAndGet();
            Throwable where = new Throwable("the event thread's stack");
            where.setStackTrace(loop.thread().getStackTrace());
            JfrEvents.stall(loop.thread(), where.getStackTrace(), System.nanoTime() - since, limit);
            LOG.warn("jccl event thread: a completion callback has held it for more than {}; every communicator's "
                    + "completions, deadlines and error checks wait meanwhile. Never block in callbacks on it: move "
                    + "them with thenRunAsync(.., executor) or Reactor's publishOn", threshold, where);
        }
    }

    private static Duration threshold() {
        try {
            return JcclSettings.EVENT_THREAD_STALL_WARNING.duration();
        } catch (RuntimeException e) {
            return Duration.ofSeconds(1);
        }
    }
}
