package org.jccl.rma.kv;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread for every KV deadline of the process; what runs on it only hands work to an endpoint's thread. A
 * deadline cancelled when its request ends leaves the queue at once, so the queue holds only requests in flight (not
 * ended ones, with their sender and pool, until their deadline would have passed), and the thread ends once no
 * deadline is pending for {@link #IDLE}: no KV thread outlives the senders and receivers.
 */
final class KvTimers {
    static final Duration IDLE = Duration.ofSeconds(1);
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private KvTimers() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "jccl-kv-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        // The one thread times out only while the queue is empty; a later deadline starts it again.
        timer.setKeepAliveTime(IDLE.toMillis(), TimeUnit.MILLISECONDS);
        timer.allowCoreThreadTimeOut(true);
        return timer;
    }

    static ScheduledFuture<?> after(Duration delay, Runnable task) {
        return TIMER.schedule(task, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    }
}
