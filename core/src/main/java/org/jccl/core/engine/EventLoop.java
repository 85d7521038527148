package org.jccl.core.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jccl.core.error.Errors;
import org.jccl.core.error.JcclException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.thread.Backoff;
import org.jccl.core.thread.EventThreadFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one event thread of the process. Streams complete in order, so for each stream with pending work it polls
 * only the oldest event, and all heads of one backend in one native crossing per round. It also polls
 * non-blocking creations, and every millisecond the async errors of communicators with pending work and the
 * deadline of every pending work. With nothing pending it parks until new work wakes it: an idle process spends no
 * CPU here (it parks once {@link Backoff#ENGINE} has spun and yielded after the last completion).
 *
 * <p>Works complete on this thread, so callbacks run here unless the user moves them: they must never block.
 * {@code Work.join()}/{@code get()} called here fail fast (see {@link #checkNotEventThread}), and
 * {@link StallWatchdog} reports, with the stack, a callback that holds the thread longer than
 * {@code jccl.eventThread.stallWarning}.
 */
public final class EventLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(EventLoop.class);
    private static final long CHECK_INTERVAL_NANOS = 1_000_000;
    private static volatile EventLoop instance;

    /** Streams activated since the last round, newest first, linked through themselves: activating allocates nothing. */
    private final AtomicReference<@Nullable StreamQueue> activations = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Watch> newWatches = new ConcurrentLinkedQueue<>();
    /** Every open communicator: copied on (rare) change, so that the checks every millisecond iterate without allocating. */
    private volatile CommunicatorState[] communicators = new CommunicatorState[0];
    private final ArrayList<StreamQueue> active = new ArrayList<>();
    private final ArrayList<Watch> watches = new ArrayList<>();
    private final AtomicLong completed = new AtomicLong();
    private StreamQueue[] batchStreams = new StreamQueue[16];
    private DriverEvent[] batchEvents = new DriverEvent[16];
    private int[] batchStatus = new int[16];
    private boolean[] batched = new boolean[16];
    /** Read by every issuing thread on every operation: on a line of its own, away from what this thread writes. */
    private final PaddedFlag parked = new PaddedFlag();
    /** When the thread started completing the current work (running its callbacks); 0 when not. */
    private final PaddedLong completingSince = new PaddedLong();
    private final Thread thread;
    private final StallWatchdog watchdog;

    /** Something polled each round until it says it is finished, e.g. a non-blocking communicator creation. */
    public interface Watch {
        /** Polls once; returns true when finished (and no longer needs polling). Must not block. */
        boolean poll();
    }

    private EventLoop() {
        EventThreadFactory factory = ServiceLoader.load(EventThreadFactory.class).findFirst().orElse(null);
        thread = factory != null ? factory.newThread(this, "jccl-event") : new Thread(this, "jccl-event");
        thread.setDaemon(true);
        thread.start();
        watchdog = new StallWatchdog(this);
    }

    /** The process's event loop, started on first use. */
    public static EventLoop get() {
        EventLoop loop = instance;
        if (loop == null) {
            synchronized (EventLoop.class) {
                loop = instance;
                if (loop == null) instance = loop = new EventLoop();
            }
        }
        return loop;
    }

    /** The event thread, e.g. to measure its CPU time. */
    public Thread thread() {
        return thread;
    }

    /** How many works the thread has seen complete since start. */
    public long completedCount() {
        return completed.get();
    }

    /** How many times a callback held the event thread longer than {@code jccl.eventThread.stallWarning}. */
    public long stallCount() {
        return watchdog.stalls();
    }

    /** Whether the caller is the event thread. */
    public static boolean isEventThread() {
        EventLoop loop = instance;
        return loop != null && Thread.currentThread() == loop.thread;
    }

    /**
     * Throws if the caller is the event thread: waiting there for a work would wait for the thread that completes
     * it, stalling every communicator of the process (as Reactor's {@code block()} refuses on non-blocking threads).
     */
    public static void checkNotEventThread(String what) {
        if (isEventThread()) {
            throw new IllegalStateException(what + " on jccl's event thread would block every completion of the "
                    + "process: compose with thenRun/thenCompose, or move callbacks off it (e.g. thenRunAsync)");
        }
    }

    /** {@code System.nanoTime()} when the thread began running the current completion's callbacks, or 0. */
    long completingSince() {
        return completingSince.get();
    }

    /** Called after a work's event was recorded on {@code stream} and the work queued there. */
    void activate(StreamQueue stream) {
        if (!stream.active.get() && stream.active.compareAndSet(false, true)) {
            // Only the activation that set the flag pushes the stream, and the event thread clears the flag only once it
            // took the stream off this list: a stream is on it at most once.
            StreamQueue first;
            do {
                first = activations.get();
                stream.nextActivation = first;
            } while (!activations.compareAndSet(first, stream));
            wake();
        }
    }

    /** Polls {@code w} every round until it says it is finished. */
    public void watch(Watch w) {
        newWatches.offer(w);
        wake();
    }

    void register(CommunicatorState c) {
        synchronized (this) {
            CommunicatorState[] now = communicators;
            CommunicatorState[] grown = Arrays.copyOf(now, now.length + 1);
            grown[now.length] = c;
            communicators = grown;
        }
    }

    void unregister(CommunicatorState c) {
        synchronized (this) {
            CommunicatorState[] now = communicators;
            for (int i = 0; i < now.length; i++) {
                if (now[i] != c) continue;
                CommunicatorState[] shrunk = Arrays.copyOf(now, now.length - 1);
                System.arraycopy(now, i + 1, shrunk, i, now.length - i - 1);
                communicators = shrunk;
                return;
            }
        }
    }

    public void wake() {
        if (parked.get()) LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        long lastProgress = System.nanoTime();
        long lastCheck = lastProgress;
        while (true) {
            try {
                drainIncoming();
                boolean progress = pollStreams() | pollWatches();
                long now = System.nanoTime();
                if (now - lastCheck >= CHECK_INTERVAL_NANOS) {
                    checkCommunicators(now);
                    lastCheck = now;
                }
                if (progress) {
                    lastProgress = now;
                } else if (active.isEmpty() && watches.isEmpty() && now - lastProgress >= Backoff.ENGINE.yieldNanos()) {
                    // Idle for a while: park until new work arrives. Right after a completion, the next operation
                    // usually follows at once (a round trip), so the branch below keeps polling briefly first.
                    if (anyPendingWork()) {
                        // Work admitted but not launched yet (its launch may be blocked inside the library, e.g.
                        // connecting to a peer that never comes): keep checking deadlines and async errors.
                        parked.set(true);
                        if (activations.get() == null && newWatches.isEmpty()) LockSupport.parkNanos(this, CHECK_INTERVAL_NANOS);
                        parked.set(false);
                    } else {
                        parkUntilWoken();
                        lastProgress = System.nanoTime();
                    }
                } else if (now - lastProgress < Backoff.ENGINE.yieldNanos()) {
                    Backoff.ENGINE.pause(now - lastProgress);
                } else {
                    parked.set(true); // set before the re-check: an activation either is seen here or unparks us
                    if (activations.get() == null && newWatches.isEmpty()) Backoff.ENGINE.pause(now - lastProgress);
                    parked.set(false);
                }
            } catch (Throwable t) {
                LOG.error("jccl event thread: unexpected failure; continuing", t);
            }
        }
    }

    private boolean anyPendingWork() {
        for (CommunicatorState c : communicators) if (c.hasPendingWork()) return true;
        return false;
    }

    /**
     * Parks until woken. {@code parked} is raised before the re-checks, and producers (an activation, a watch, a work
     * admitted to a communicator) publish before they read it, so one side always sees the other.
     */
    private void parkUntilWoken() {
        parked.set(true);
        if (activations.get() == null && newWatches.isEmpty() && !anyPendingWork()) LockSupport.park(this);
        parked.set(false);
    }

    private void drainIncoming() {
        StreamQueue s = activations.getAndSet(null);
        while (s != null) {
            StreamQueue next = s.nextActivation;
            s.nextActivation = null;
            active.add(s);
            s = next;
        }
        Watch w;
        while ((w = newWatches.poll()) != null) watches.add(w);
    }

    /** One round: the head of every active stream, one poll per backend. True if any work completed. */
    private boolean pollStreams() {
        boolean progress = false;
        int size = active.size();
        ensureCapacity(size);
        Arrays.fill(batched, 0, size, false);
        int remaining = size;
        // Almost always one backend; the loop handles several by batching each backend's streams in turn.
        while (remaining > 0) {
            Driver driver = null;
            int n = 0;
            for (int i = 0; i < size; i++) {
                if (batched[i]) continue;
                StreamQueue s = active.get(i);
                Driver d = s.driver();
                if (driver == null) driver = d;
                if (d != driver) continue;
                TrackedWork head = s.oldest();
                batched[i] = true;
                remaining--;
                if (head == null) continue;
                batchStreams[n] = s;
                batchEvents[n] = head.event();
                n++;
            }
            if (n > 0) {
                driver.pollEvents(batchEvents, n, batchStatus);
                for (int i = 0; i < n; i++) {
                    int status = batchStatus[i];
                    if (status != DriverConstants.EVENT_PENDING) {
                        StreamQueue s = batchStreams[i];
                        TrackedWork w = s.oldest();
                        if (w != null) {
                            s.removeOldest(w);
                            finish(w, status, driver);
                        }
                        progress = true;
                    }
                    batchStreams[i] = null;
                    batchEvents[i] = null;
                }
            }
        }
        // Drop streams whose queues are empty; a producer that raced us re-activates (see activate()).
        for (int i = active.size() - 1; i >= 0; i--) {
            StreamQueue s = active.get(i);
            if (s.isEmpty()) {
                s.active.set(false);
                if (s.isEmpty() || !s.active.compareAndSet(false, true)) removeAt(i);
            }
        }
        return progress;
    }

    private void removeAt(int i) {
        int last = active.size() - 1;
        active.set(i, active.get(last));
        active.remove(last);
    }

    private void ensureCapacity(int n) {
        if (batchEvents.length < n) {
            int size = Integer.highestOneBit(n) * 2;
            batchStreams = new StreamQueue[size];
            batchEvents = new DriverEvent[size];
            batchStatus = new int[size];
            batched = new boolean[size];
        }
    }

    /** The books first (memory, event, pending sets), then the work: whoever its completion wakes sees them done. */
    private void finish(TrackedWork w, int status, Driver driver) {
        StreamQueue stream = w.stream();
        DriverEvent event = w.event();
        w.releaseMemory();
        if (stream != null && event != null) stream.events().recycle(event);
        completed.incrementAndGet();
        Throwable failure = null;
        if (status == DriverConstants.EVENT_DONE) {
            // An aborted or failed operation also ends its event: success only if no participant has failed.
            for (CommunicatorState c : w.participants()) {
                JcclException f = c.failureAfterCompletion();
                if (f != null) {
                    failure = Errors.forWork(f, w.describe());
                    break;
                }
            }
        } else {
            failure = Errors.fromRuntime("waiting for " + w.describe(), status, driver.runtimeErrorString(status));
        }
        for (CommunicatorState c : w.participants()) c.finished(w);
        completingSince.set(System.nanoTime());
        try {
            if (failure == null) w.succeed();
            else w.fail(failure);
        } finally {
            completingSince.set(0);
            w.retired();
        }
    }

    private boolean pollWatches() {
        boolean progress = false;
        for (int i = watches.size() - 1; i >= 0; i--) {
            boolean finished;
            try {
                finished = watches.get(i).poll();
            } catch (RuntimeException e) {
                LOG.error("jccl event thread: a watch failed", e);
                finished = true;
            }
            if (finished) {
                int last = watches.size() - 1;
                watches.set(i, watches.get(last));
                watches.remove(last);
                progress = true;
            }
        }
        return progress;
    }

    /**
     * Async errors of communicators with pending work, and the deadline of every pending work (queued behind a stuck
     * one, or not launched yet, included).
     */
    private void checkCommunicators(long now) {
        for (CommunicatorState c : communicators) {
            if (!c.hasPendingWork()) continue;
            c.checkAsyncError();
            c.checkDeadlines(now);
        }
    }
}
