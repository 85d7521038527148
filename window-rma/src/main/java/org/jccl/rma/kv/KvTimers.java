package org.jccl.rma.kv;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** One daemon thread for every KV deadline of the process; what runs on it only hands work to an endpoint's thread. */
final class KvTimers {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "jccl-kv-timer");
        t.setDaemon(true);
        return t;
    });

    private KvTimers() {
    }

    static ScheduledFuture<?> after(Duration delay, Runnable task) {
        return TIMER.schedule(task, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    }
}
