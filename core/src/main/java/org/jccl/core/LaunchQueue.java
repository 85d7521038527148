package org.jccl.core;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The launch thread of one communicator: runs its tasks one at a time in submission order, so issue order is call
 * order and NCCL's thread-local group state stays on one thread. The current device is set once, at start.
 * After each task it busy-polls briefly (the next operation usually follows at once), then parks.
 */
final class LaunchQueue implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(LaunchQueue.class);

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final Runnable onStart;
    private volatile boolean parked;
    private volatile boolean stopping;

    /**
     * @param name    the thread's name
     * @param onStart run first on the thread (sets the device)
     */
    LaunchQueue(String name, Runnable onStart) {
        this.onStart = onStart;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    void submit(Runnable task) {
        tasks.offer(task);
        if (parked) LockSupport.unpark(thread);
    }

    /** Whether the caller is this queue's thread. */
    boolean isLaunchThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs what is queued, then ends the thread. */
    void stop() {
        stopping = true;
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        try {
            onStart.run();
        } catch (Throwable t) {
            LOG.error("{}: start-up failed", thread.getName(), t);
        }
        long lastTask = System.nanoTime();
        while (true) {
            Runnable task = tasks.poll();
            if (task != null) {
                try {
                    task.run();
                } catch (Throwable t) {
                    LOG.error("{}: a launch task failed unexpectedly", thread.getName(), t);
                }
                lastTask = System.nanoTime();
                continue;
            }
            if (stopping) return;
            long idle = System.nanoTime() - lastTask;
            if (idle < Backoff.YIELD_NANOS) {
                Backoff.pause(idle);
            } else {
                parked = true; // set before the re-check: a submit either is seen here or unparks us
                if (tasks.isEmpty() && !stopping) LockSupport.park(this);
                parked = false;
            }
        }
    }
}
