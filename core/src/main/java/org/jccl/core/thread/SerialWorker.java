package org.jccl.core.thread;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread that runs tasks one at a time in submission order: a communicator's launch thread, a host
 * stream. After each task it busy-polls for {@code spinNanos} (the next task usually follows at once; waking a
 * parked thread would cost as much as a small operation), then yields until {@code yieldNanos}, then parks until a
 * submission: an idle worker costs no CPU.
 */
public final class SerialWorker implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SerialWorker.class);

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final Runnable onStart;
    private final Backoff backoff;
    private volatile boolean parked;
    private volatile boolean stopping;

    /**
     * Starts the thread.
     *
     * @param name    the thread's name
     * @param onStart run first on the thread (e.g. setting the current device)
     * @param backoff how it waits after a task before it parks
     */
    public SerialWorker(String name, Runnable onStart, Backoff backoff) {
        this.onStart = onStart;
        this.backoff = backoff;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Queues {@code task} after everything submitted before it. Returns true if the task will run, false (and it
     * will not) once the worker is stopping: an accepted task is never dropped.
     */
    public boolean submit(Runnable task) {
        if (stopping) return false;
        tasks.offer(task);
        if (stopping) {
            // stop() raced this submission. The worker polls once more after it sees stopping, so the task either
            // is still queued (take it back and refuse it) or the worker has taken it and runs it.
            return !tasks.remove(task);
        }
        if (parked) LockSupport.unpark(thread);
        return true;
    }

    /** Whether the caller is this worker's thread. */
    public boolean isWorkerThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs what is queued, then ends the thread; later submissions are refused. */
    public void stop() {
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
                runSafely(task);
                lastTask = System.nanoTime();
                continue;
            }
            if (stopping) {
                // A submission that saw stopping == false offered its task before this read: poll once more so
                // it runs. Any later offer sees stopping and takes its task back (see submit()).
                task = tasks.poll();
                if (task == null) return;
                runSafely(task);
                continue;
            }
            long idle = System.nanoTime() - lastTask;
            if (!backoff.isIdle(idle)) {
                backoff.pause(idle);
            } else {
                parked = true; // set before the re-check: a submission either is seen here or unparks us
                if (tasks.isEmpty() && !stopping) LockSupport.park(this);
                parked = false;
            }
        }
    }

    private void runSafely(Runnable task) {
        try {
            task.run();
        } catch (Throwable t) {
            LOG.error("{}: a task failed unexpectedly", thread.getName(), t);
        }
    }

    @Override
    public String toString() {
        return thread.getName();
    }
}
