package org.jccl.core.thread;

import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread that runs tasks one at a time in submission order: a communicator's launch thread, a host
 * stream. After each task it busy-polls for {@code spinNanos} (the next task usually follows at once; waking a
 * parked thread would cost as much as a small operation), then yields until {@code yieldNanos}, then parks until a
 * submission: an idle worker costs no CPU.
 *
 * <p>Submitting allocates nothing: the queue is an array of (handler, argument) pairs that grows once to the most ever
 * queued, rather than a linked queue's node per task, and {@link #submit(Consumer, Object)} lets the engine queue its
 * own objects without a lambda around each (the launch of one operation is its work, handed to a shared handler).
 */
public final class SerialWorker implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SerialWorker.class);

    /** What runs a submitted {@link Runnable}. */
    private static final Consumer<Runnable> RUN = Runnable::run;

    /** Handler, argument, handler, argument, ...; guarded by itself. */
    private final ArrayDeque<Object> tasks = new ArrayDeque<>();
    /** Tasks submitted and not yet taken; read without the lock, so an idle worker spins without taking it. */
    private volatile int queued;
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
        return submit(RUN, task);
    }

    /**
     * Queues {@code handler.accept(argument)} after everything submitted before it, as {@link #submit(Runnable)}: for a
     * shared handler, nothing is allocated.
     */
    public <T> boolean submit(Consumer<? super T> handler, T argument) {
        synchronized (tasks) {
            // Under the lock that the worker's last poll takes after it saw stopping: refused here, or run there.
            if (stopping) return false;
            tasks.addLast(handler);
            tasks.addLast(argument);
            queued++;
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
            if (runNext()) {
                lastTask = System.nanoTime();
                continue;
            }
            if (stopping) {
                // A submission that saw stopping == false queued its task under the lock before this poll: run what
                // is left; any later one sees stopping under the lock and is refused.
                while (runNext()) {
                    // drain
                }
                return;
            }
            long idle = System.nanoTime() - lastTask;
            if (!backoff.isIdle(idle)) {
                backoff.pause(idle);
            } else {
                parked = true; // set before the re-check: a submission either is seen here or unparks us
                if (queued == 0 && !stopping) LockSupport.park(this);
                parked = false;
            }
        }
    }

    /** Runs the oldest task, if any. */
    @SuppressWarnings("unchecked")
    private boolean runNext() {
        if (queued == 0 && !stopping) return false;
        Consumer<Object> handler;
        Object argument;
        synchronized (tasks) {
            if (tasks.isEmpty()) return false;
            handler = (Consumer<Object>) tasks.pollFirst();
            argument = tasks.pollFirst();
            queued--;
        }
        try {
            handler.accept(argument);
        } catch (Throwable t) {
            LOG.error("{}: a task failed unexpectedly", thread.getName(), t);
        }
        return true;
    }

    @Override
    public String toString() {
        return thread.getName();
    }
}
