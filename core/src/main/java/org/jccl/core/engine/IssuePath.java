package org.jccl.core.engine;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.thread.SerialWorker;
import org.jspecify.annotations.Nullable;

/**
 * The issue path of every operation, step 1 of 3: admission, the hand-off to the launch queue, the native enqueue,
 * and the completion event recorded on the stream. A single operation is a group of one, issued without
 * {@code ncclGroupStart}/{@code End}, and {@link #issueOne} issues it without allocating: the work is its own launch
 * task and the engine's queues link it through its own fields.
 *
 * <p>Admission takes each communicator's submit lock: the sequence numbers, the pending set and the launch queue
 * see the same order, so sequence order is launch order. A refused work (closed or aborted communicator, a stopped
 * queue) fails at once with the reason and releases its memory.
 */
public final class IssuePath {
    /** Serializes groups over several communicators, so their launch threads are claimed in one global order. */
    private static final Object MULTI_COMMUNICATOR_ORDER = new Object();
    /** The launch task of every work issued alone: shared, the work being its argument. */
    private static final Consumer<TrackedWork> LAUNCH_ONE = IssuePath::launchOne;

    private IssuePath() {
    }

    /** What the launch thread enqueues on a communicator's stream for one operation. */
    @FunctionalInterface
    public interface Enqueue {
        void enqueue(DriverStream stream);
    }

    /** Makes the work once its sequence numbers are known (one per operation, in issue order). */
    @FunctionalInterface
    public interface WorkFactory<W extends TrackedWork> {
        W create(long[] sequences);
    }

    /**
     * Issues {@code w} alone on {@code c}: admitted, given its sequence number, and launched by {@code c}'s launch
     * thread through {@link TrackedWork#enqueue}. Returns the work, already failed if it was refused. Allocates
     * nothing; never blocks on the GPU.
     */
    public static <W extends TrackedWork> W issueOne(CommunicatorState c, W w) {
        w.participants(c.alone());
        synchronized (c.submitLock()) {
            w.sequence(c.nextSequence());
            w.issued();
            JcclException refused = c.admit(w);
            if (refused != null) return refuse(w, refused);
            if (!c.launchQueue().submit(LAUNCH_ONE, w)) {
                c.finished(w);
                return refuse(w, new InvalidUsageException("the communicator is closed"));
            }
            return w;
        }
    }

    /** On the launch thread: the work's own enqueue, then its completion event. */
    private static void launchOne(TrackedWork w) {
        CommunicatorState c = w.participants()[0];
        JcclException f = c.failure();
        if (f != null) {
            failLaunch(w, f);
            return;
        }
        Driver driver = c.driver();
        c.inLibrary(true);
        driver.attribute(c.id(), w.sequence());
        try {
            StreamQueue stream = c.stream();
            w.enqueue(stream.driverStream());
            w.launchReturned();
            stream.recordAndTrack(w);
        } catch (RuntimeException e) {
            failLaunch(w, e);
        } finally {
            driver.attribute(null, -1);
            c.inLibrary(false);
        }
    }

    /**
     * Issues {@code parts.get(i)} on {@code comms.get(i)}, all in one group when there is more than one operation.
     * Returns the work, already failed if the group was refused. Never blocks on the GPU.
     */
    public static <W extends TrackedWork> W issue(List<CommunicatorState> comms, List<List<Enqueue>> parts, WorkFactory<W> factory) {
        return issue(comms, parts, comms.size() > 1 || parts.get(0).size() > 1, factory);
    }

    /**
     * As {@link #issue(List, List, WorkFactory)}; {@code grouped} false enqueues the parts as they are, outside any
     * group, for parts that order several communicators' streams themselves (a step over several communicators: a
     * group would hold back its library calls until the group's end, behind the stream waits meant to order them).
     */
    public static <W extends TrackedWork> W issue(List<CommunicatorState> comms, List<List<Enqueue>> parts, boolean grouped,
                                                  WorkFactory<W> factory) {
        if (comms.size() == 1) {
            CommunicatorState c = comms.get(0);
            synchronized (c.submitLock()) {
                W w = prepare(comms, parts, factory);
                JcclException refused = c.admit(w);
                if (refused != null) return refuse(w, refused);
                if (!c.launchQueue().submit(() -> launch(w, comms, parts, grouped))) {
                    c.finished(w);
                    return refuse(w, new InvalidUsageException("the communicator is closed"));
                }
                return w;
            }
        }
        synchronized (MULTI_COMMUNICATOR_ORDER) {
            return issueAcross(comms, parts, grouped, factory);
        }
    }

    /**
     * Several communicators: NCCL's group state is thread-local, so the first communicator's launch thread issues
     * the whole group while the others' launch threads are claimed (each runs a task that waits), in one global
     * order so that two such groups cannot deadlock.
     */
    private static <W extends TrackedWork> W issueAcross(List<CommunicatorState> comms, List<List<Enqueue>> parts,
                                                          boolean grouped, WorkFactory<W> factory) {
        W w = prepare(comms, parts, factory);
        for (int i = 0; i < comms.size(); i++) {
            CommunicatorState c = comms.get(i);
            synchronized (c.submitLock()) {
                JcclException refused = c.admit(w);
                if (refused != null) {
                    for (int j = 0; j < i; j++) comms.get(j).finished(w);
                    return refuse(w, refused);
                }
            }
        }
        CountDownLatch claimed = new CountDownLatch(comms.size() - 1);
        CountDownLatch done = new CountDownLatch(1);
        for (int i = 1; i < comms.size(); i++) {
            boolean queued = comms.get(i).launchQueue().submit(() -> {
                claimed.countDown();
                awaitUninterruptibly(done);
            });
            if (!queued) claimed.countDown(); // launch() then sees that communicator's failure and fails the work
        }
        boolean queued = comms.get(0).launchQueue().submit(() -> {
            awaitUninterruptibly(claimed);
            try {
                launch(w, comms, parts, grouped);
            } finally {
                done.countDown();
            }
        });
        if (!queued) {
            done.countDown();
            failLaunch(w, new InvalidUsageException("the communicator is closed"));
        }
        return w;
    }

    private static <W extends TrackedWork> W prepare(List<CommunicatorState> comms, List<List<Enqueue>> parts, WorkFactory<W> factory) {
        int total = 0;
        for (List<Enqueue> list : parts) total += list.size();
        long[] sequences = new long[total];
        int k = 0;
        for (int i = 0; i < comms.size(); i++) {
            CommunicatorState c = comms.get(i);
            synchronized (c.submitLock()) {
                for (int j = 0; j < parts.get(i).size(); j++) sequences[k++] = c.nextSequence();
            }
        }
        W w = factory.create(sequences);
        w.participants(comms.toArray(new CommunicatorState[0]));
        w.issued();
        return w;
    }

    private static <W extends TrackedWork> W refuse(W w, JcclException reason) {
        w.releaseMemory();
        w.fail(Errors.forWork(reason, w.describe()));
        w.retired();
        return w;
    }

    /** On the (first) launch thread: enqueue everything, then record the one completion event. */
    private static void launch(TrackedWork w, List<CommunicatorState> comms, List<List<Enqueue>> parts, boolean grouped) {
        for (CommunicatorState c : comms) {
            JcclException f = c.failure();
            if (f != null) {
                failLaunch(w, f);
                return;
            }
        }
        CommunicatorState first = comms.get(0);
        Driver driver = first.driver();
        for (CommunicatorState c : comms) c.inLibrary(true);
        driver.attribute(first.id(), w.sequence());
        try {
            if (grouped) driver.groupStart();
            try {
                for (int i = 0; i < comms.size(); i++) {
                    DriverStream s = comms.get(i).stream().driverStream();
                    for (Enqueue e : parts.get(i)) e.enqueue(s);
                }
            } finally {
                if (grouped) driver.groupEnd();
            }
            // One event per work: the first stream waits for the others' parts, then records it.
            for (int i = 1; i < comms.size(); i++) join(comms.get(i), first);
            w.launchReturned();
            first.stream().recordAndTrack(w);
        } catch (RuntimeException e) {
            failLaunch(w, e);
        } finally {
            driver.attribute(null, -1);
            for (CommunicatorState c : comms) c.inLibrary(false);
        }
    }

    /**
     * Makes {@code into}'s stream wait for what was enqueued on {@code from}'s stream so far (an event recorded there);
     * on the launch thread that issues for both. Under stream capture it becomes a dependency of the graph.
     */
    public static void join(CommunicatorState from, CommunicatorState into) {
        StreamQueue other = from.stream();
        DriverEvent join = other.events().take(other.device());
        join.record(other.driverStream());
        into.stream().driverStream().waitEvent(join);
        other.events().recycle(join);
    }

    /** A launch that failed, with {@code e} (a library error, or anything else the enqueue threw): never launched. */
    private static void failLaunch(TrackedWork w, RuntimeException e) {
        JcclException reason = e instanceof JcclException j ? j : new JcclException("launch failed: " + e, e);
        w.releaseMemory();
        for (CommunicatorState c : w.participants()) c.finished(w);
        w.fail(Errors.forWork(reason, w.describe()));
        w.retired();
    }

    /**
     * Stream work (copies, fills, markers): enqueued by {@code issuer} — a communicator's launch queue for its own
     * stream, so that call order is stream order with its operations — or by the caller when null.
     */
    public static <W extends TrackedWork> W onStream(StreamQueue stream, @Nullable SerialWorker issuer, W w, Enqueue enqueue) {
        Runnable task = () -> {
            try {
                enqueue.enqueue(stream.driverStream());
                stream.recordAndTrack(w);
            } catch (RuntimeException e) {
                w.releaseMemory();
                w.fail(e instanceof JcclException j ? j : new JcclException(w.describe() + ": " + e, e));
                w.retired();
            }
        };
        if (issuer == null || issuer.isWorkerThread()) {
            task.run();
        } else if (!issuer.submit(task)) {
            w.releaseMemory();
            w.fail(new InvalidUsageException(w.describe() + ": the stream's communicator is closed"));
            w.retired();
        }
        return w;
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }
}
