package org.jccl.core.engine;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.jfr.JfrEvents;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.thread.SerialWorker;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's side of one communicator: its lifecycle state machine, the works it has admitted and not yet seen
 * complete, its launch queue (one thread: issue order is call order, and NCCL's thread-local group state stays on
 * one thread), and the checks the event thread runs on it (async error, deadlines).
 *
 * <p>States: {@code OPEN} → {@code CLOSING} (draining) → {@code CLOSED}; {@code OPEN}/{@code CLOSING} →
 * {@code ABORTED}. Every lifecycle call returns a future that completes in every state.
 */
public final class CommunicatorState {
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorState.class);

    private enum State { OPEN, CLOSING, CLOSED, ABORTED }

    private final Driver driver;
    private final DriverComm driverComm;
    private final String id;
    private final String label;
    private final SerialWorker launchQueue;
    private final StreamQueue stream;
    private final Duration closeTimeout;
    private final boolean abortOnTimeout;
    private final Runnable onRelease;
    private final PendingWorks pending = new PendingWorks();
    /** This communicator alone: the participants of each of its single works, shared rather than made per work. */
    private final CommunicatorState[] alone = {this};
    /** The deadline check's tests, made once rather than on every check. */
    private final PendingWorks.Selector stalled = this::newlyStalled;
    private final PendingWorks.Selector overdue = (w, now) -> now - w.deadlineNanos() > 0 && !w.isSettled();
    private final Attachments attachments;
    /** The submit lock and the sequence numbers. */
    private final Admission submitLock = new Admission();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final CompletableFuture<Void> aborted = new CompletableFuture<>();
    private volatile State state = State.OPEN;
    private volatile @Nullable JcclException failure;
    private volatile boolean revoked;
    /** Whether the event thread must not query the async error while the launch thread is inside the library. */
    private final boolean asyncErrorWaitsForLaunch;
    /**
     * Whether the launch thread is inside a library call for this communicator, kept only where
     * {@link #asyncErrorWaitsForLaunch}: written by it twice per operation, read by the event thread, so on a line of
     * its own, away from the state that issuing threads read.
     */
    private final PaddedFlag inLibrary = new PaddedFlag();
    /** How long a work may stay pending before what it waits for is logged once ({@code jccl.stallReport}); 0: never. */
    private final long stallReportNanos = JcclSettings.stallReportNanos();
    /** Completed when the pending set empties while closing; written under the submit lock, read by the event thread. */
    private volatile @Nullable CompletableFuture<Void> drained;

    /**
     * @param id             the communicator's id shared by its ranks, as recorded events name it, e.g. {@code 3f2a}
     * @param label          the prefix of every message, e.g. {@code [comm=3f2a rank=1/2]}
     * @param closeTimeout   how long {@link #closeAsync()} drains before it aborts
     * @param abortOnTimeout whether a work past its deadline aborts the communicator (else only that work fails)
     * @param onRelease      run once the communicator is destroyed or aborted (e.g. destroying its stream)
     */
    public CommunicatorState(Driver driver, DriverComm driverComm, String id, String label, SerialWorker launchQueue,
                             StreamQueue stream, Duration closeTimeout, boolean abortOnTimeout, Runnable onRelease) {
        this.driver = driver;
        this.driverComm = driverComm;
        this.id = id;
        this.label = label;
        this.launchQueue = launchQueue;
        this.stream = stream;
        this.closeTimeout = closeTimeout;
        this.abortOnTimeout = abortOnTimeout;
        this.onRelease = onRelease;
        this.asyncErrorWaitsForLaunch = !driverComm.asyncErrorSafeDuringLaunch();
        this.attachments = new Attachments(label);
        EventLoop.get().register(this);
    }

    public Driver driver() {
        return driver;
    }

    public DriverComm driverComm() {
        return driverComm;
    }

    public String label() {
        return label;
    }

    /** The communicator's id, shared by its ranks (as {@code comm=3f2a} in messages and JFR events). */
    public String id() {
        return id;
    }

    public StreamQueue stream() {
        return stream;
    }

    public SerialWorker launchQueue() {
        return launchQueue;
    }

    /** What modules keep on this communicator; ended with it. */
    public Attachments attachments() {
        return attachments;
    }

    public boolean isOpen() {
        return state == State.OPEN;
    }

    /** The error that aborted this communicator, if it was aborted. */
    public @Nullable JcclException failure() {
        return failure;
    }

    /** Works admitted and not yet seen complete (books are updated before a work completes). */
    public int pendingCount() {
        return pending.size();
    }

    boolean hasPendingWork() {
        return !pending.isEmpty();
    }

    /** Throws the reason this communicator cannot take new work, if it cannot. */
    public void checkOpen() {
        State s = state;
        if (s == State.ABORTED) {
            JcclException f = failure;
            throw f != null ? Errors.forWork(f, label) : new CommunicatorAbortedException(label + ": aborted");
        }
        if (s != State.OPEN) throw new InvalidUsageException(label + " is closed");
    }

    // ---- admission (IssuePath, under the submit lock)

    Object submitLock() {
        return submitLock;
    }

    /** The next sequence number; call with the submit lock held. */
    long nextSequence() {
        return submitLock.next();
    }

    /** Accepts a work, or says why not; call with the submit lock held. */
    @Nullable JcclException admit(TrackedWork work) {
        if (state == State.ABORTED) return failure;
        if (state != State.OPEN) return new InvalidUsageException("the communicator is closed");
        pending.add(work);
        // Its launch may block inside the library before any event is recorded: the event thread must be awake to
        // watch the deadline.
        EventLoop.get().wake();
        return null;
    }

    /** This communicator alone, as the participants of a work issued on it alone: one array for all of them. */
    CommunicatorState[] alone() {
        return alone;
    }

    /** Marks the launch thread as inside (or out of) a library call for this communicator. */
    void inLibrary(boolean inside) {
        if (asyncErrorWaitsForLaunch) inLibrary.set(inside);
    }

    /** Books of a work that completed or never launched: called before the work itself completes. */
    void finished(TrackedWork w) {
        // Emptiness is asked only while closing: counting a concurrent set's members sums its counters, a cost that
        // every completion would pay. closeAsync() publishes drained before it counts, so one side sees the other.
        if (pending.remove(w)) {
            CompletableFuture<Void> d = drained;
            if (d != null && pending.isEmpty()) d.complete(null);
        }
    }

    // ---- calls in issue order

    /**
     * {@link #call(String, Supplier)} for a collective call whose peers may never make theirs (a window registration
     * on one rank only): not finished within {@code timeout} (zero for none), its future fails with a
     * {@link WorkTimeoutException} naming what the driver reports the rank waits for, and under the
     * abort-on-timeout policy the communicator is aborted, which ends the call's wait.
     */
    public <T> CompletableFuture<T> call(String what, Supplier<T> task, Duration timeout) {
        CompletableFuture<T> result = call(what, task);
        if (timeout.isZero() || result.isDone()) return result;
        CompletableFuture<Void> deadline = new CompletableFuture<Void>().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        result.whenComplete((v, e) -> deadline.complete(null)); // cancels the timer
        // Off the JDK's one timer thread: failing the call runs the caller's dependent stages.
        deadline.whenCompleteAsync((v, late) -> {
            if (late != null) callTimedOut(result, what, timeout);
        });
        return result;
    }

    private void callTimedOut(CompletableFuture<?> call, String what, Duration timeout) {
        String waitingFor = diagnosis("check that every rank makes this call, in the same order as its operations");
        WorkTimeoutException e = new WorkTimeoutException("still not done after " + timeout + " on this rank: "
                + waitingFor, -1, null, null, label + " " + what, null);
        if (!call.completeExceptionally(e)) return;
        JfrEvents.timeout(id, driverComm.rank(), driverComm.size(), -1, what, timeout.toNanos(), waitingFor, abortOnTimeout);
        if (abortOnTimeout) {
            LOG.error("{}; aborting the communicator", e.getMessage());
            abort(new CommunicatorAbortedException("aborted: " + what + " timed out after " + timeout, -1, null, null,
                    null, e));
        } else {
            LOG.warn("{}", e.getMessage());
        }
    }

    /** What the driver reports this rank waits for, else {@code usualCause}. */
    private String diagnosis(String usualCause) {
        String blocked;
        try {
            blocked = driverComm.waitingFor();
        } catch (RuntimeException e) {
            blocked = null; // a report is a courtesy: it must never hide the timeout itself
        }
        return blocked != null ? blocked : usualCause;
    }

    /**
     * Runs {@code task} on the launch thread after everything issued before it; the future carries its result, or
     * fails if the communicator is aborted or closed first. Never blocks the caller.
     */
    public <T> CompletableFuture<T> call(String what, Supplier<T> task) {
        checkOpen();
        CompletableFuture<T> result = new CompletableFuture<>();
        recordLifecycle(what, null, result);
        boolean queued = launchQueue.submit(() -> {
            JcclException f = failure;
            if (f != null) {
                result.completeExceptionally(Errors.forWork(f, label + " " + what));
                return;
            }
            T value;
            inLibrary(true);
            try {
                value = task.get();
            } catch (Throwable t) {
                result.completeExceptionally(t);
                return;
            } finally {
                inLibrary(false);
            }
            result.complete(value);
        });
        if (!queued) result.completeExceptionally(stopped(what));
        return result;
    }

    /**
     * Runs a clean-up {@code task} (destroying a reduction, deregistering) in issue order if the communicator still
     * exists; returns false, running nothing, if it was closed or aborted (the library freed everything then).
     */
    public boolean cleanUpInOrder(Runnable task) {
        State s = state;
        return (s == State.OPEN || s == State.CLOSING) && launchQueue.submit(task);
    }

    /** {@code ncclCommRevoke}: on its own thread, since the launch thread may be the one that is stuck. */
    public CompletableFuture<Void> revoke() {
        checkOpen();
        revoked = true;
        CompletableFuture<Void> done = new CompletableFuture<>();
        recordLifecycle("revoke", null, done);
        daemon(() -> {
            try {
                driverComm.revoke(0);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        }, "jccl-revoke-" + label).start();
        return done;
    }

    private JcclException stopped(String what) {
        JcclException f = failure;
        return f != null ? Errors.forWork(f, label + " " + what) : new InvalidUsageException(label + " " + what + ": the communicator is closed");
    }

    // ---- lifetime

    /**
     * Drains pending work (up to the close timeout), then finalizes (unless revoked, which finalize does not accept)
     * and destroys on the launch thread; aborts instead if draining times out. Idempotent; never blocks.
     */
    public CompletableFuture<Void> closeAsync() {
        CompletableFuture<Void> toDrain;
        synchronized (submitLock) {
            if (state == State.ABORTED) return aborted.exceptionally(e -> null);
            if (state != State.OPEN) return closed;
            state = State.CLOSING;
            toDrain = new CompletableFuture<>();
            drained = toDrain;
            if (pending.isEmpty()) toDrain.complete(null);
        }
        recordLifecycle("close", null, closed);
        attachments.closing(); // modules end what waits on peers, so that the drain below can finish
        toDrain.orTimeout(closeTimeout.toMillis(), TimeUnit.MILLISECONDS).whenComplete((v, timeout) -> {
            if (timeout != null) {
                LOG.warn("{} close: pending work did not drain within {}; aborting", label, closeTimeout);
                abort(new CommunicatorAbortedException("closed with work still pending after " + closeTimeout))
                        .whenComplete((x, e) -> closed.complete(null));
                return;
            }
            boolean queued = launchQueue.submit(() -> {
                Throwable failed = null;
                try {
                    if (!revoked) driverComm.finalizeComm();
                    driverComm.destroy();
                    synchronized (submitLock) {
                        state = State.CLOSED;
                    }
                } catch (Throwable t) {
                    failed = t;
                } finally {
                    // Complete only once modules were told it is gone and its stream is freed: a caller that joins
                    // the close may count on both.
                    try {
                        release();
                    } finally {
                        if (failed == null) closed.complete(null);
                        else closed.completeExceptionally(failed);
                    }
                }
            });
            // An abort raced the close and stopped the queue: the communicator is gone either way.
            if (!queued) aborted.whenComplete((x, e) -> closed.complete(null));
        });
        return closed;
    }

    /** Aborts on the application's behalf. */
    public CompletableFuture<Void> abort() {
        return abort(new CommunicatorAbortedException("aborted by the application"));
    }

    /**
     * {@code ncclCommAbort}: fails every pending work with {@code cause} and runs the library's abort on its own
     * thread; the future completes when it returned, or fails (a {@link WorkTimeoutException}) after
     * {@code jccl.abortTimeout} if it hangs. A closed communicator has nothing to abort: the future is complete at
     * once. Idempotent; never blocks.
     */
    public CompletableFuture<Void> abort(JcclException cause) {
        synchronized (submitLock) {
            if (state == State.CLOSED) return CompletableFuture.completedFuture(null);
            if (state == State.ABORTED) return aborted;
            failure = cause; // first: checkOpen reads the state without the lock, then the failure
            state = State.ABORTED;
        }
        recordLifecycle("abort", cause.toString(), aborted);
        List<TrackedWork> inIssueOrder = pending.snapshot();
        inIssueOrder.sort(Comparator.comparingLong(TrackedWork::sequence));
        for (TrackedWork w : inIssueOrder) w.fail(Errors.forWork(cause, w.describe()));
        attachments.closing();
        daemon(() -> {
            try {
                driverComm.abort();
                aborted.complete(null);
            } catch (Throwable t) {
                aborted.completeExceptionally(t);
            } finally {
                release();
            }
        }, "jccl-abort-" + label).start();
        // A library abort that hangs fails the future, typed, so that abort().join() in clean-up code returns.
        Duration limit = JcclSettings.abortTimeout();
        CompletableFuture.delayedExecutor(limit.toMillis(), TimeUnit.MILLISECONDS).execute(() -> {
            if (aborted.completeExceptionally(new WorkTimeoutException(label + ": the library's abort did not return within "
                    + limit + " (jccl.abortTimeout); its thread is left behind", -1, null, null, label + " abort()", null))) {
                JfrEvents.timeout(id, driverComm.rank(), driverComm.size(), -1, "abort", limit.toNanos(), null, false);
                LOG.error("{} ncclCommAbort did not return within {}", label, limit);
            }
        });
        return aborted;
    }

    private void release() {
        launchQueue.stop();
        EventLoop.get().unregister(this);
        attachments.gone();
        // The stream may still hold events of aborted work; the event thread keeps polling them, which the runtime
        // allows after the stream is destroyed.
        onRelease.run();
    }

    /** A JFR {@code jccl.Lifecycle} event of {@code call}, made now and committed when {@code result} completes. */
    private void recordLifecycle(String call, @Nullable String reason, CompletableFuture<?> result) {
        JfrEvents.lifecycle(id, driverComm.rank(), driverComm.size(), call, reason, result);
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    // ---- event thread

    /**
     * The failure that voids a work of this communicator whose event completed: the abort's cause, or the async
     * error (which then aborts the communicator); null if none.
     */
    @Nullable JcclException failureAfterCompletion() {
        JcclException f = failure;
        if (f != null) return f;
        checkAsyncError();
        return failure;
    }

    /** While work is pending: the first async error aborts the communicator. */
    void checkAsyncError() {
        if (state == State.ABORTED) return;
        if (asyncErrorWaitsForLaunch && inLibrary.get()) return;
        int code = driverComm.asyncError();
        if (code == Errors.SUCCESS || code == Errors.IN_PROGRESS) return;
        JcclException e = Errors.fromResult("the communicator's async error", code, driver.resultString(code),
                driverComm.lastError(), label);
        LOG.error("{}; aborting the communicator and failing {} pending work(s)", e.getMessage(), pending.size());
        abort(e);
    }

    /**
     * Applies the timeout policy to each pending work past its deadline, oldest first, and reports once each work
     * pending longer than {@code jccl.stallReport}.
     */
    void checkDeadlines(long now) {
        List<TrackedWork> stalls = stallReportNanos > 0 ? pending.select(now, stalled) : null;
        if (stalls != null) for (TrackedWork w : stalls) reportStall(w);
        List<TrackedWork> late = pending.select(now, overdue);
        if (late == null) return;
        late.sort(Comparator.comparingLong(TrackedWork::sequence));
        for (TrackedWork w : late) {
            if (state == State.ABORTED) return;
            if (w.markTimeoutReported()) timedOut(w);
        }
    }

    /** Whether {@code w} has been pending longer than {@code jccl.stallReport} and was not reported yet. */
    private boolean newlyStalled(TrackedWork w, long now) {
        return now - w.createdNanos() > stallReportNanos && !w.isSettled() && w.markStallReported();
    }

    /**
     * A work still pending after {@code jccl.stallReport}: long before its timeout, the log says what it waits for, so
     * a person watching a silent job learns which rank to look at.
     */
    private void reportStall(TrackedWork w) {
        LOG.warn("{} still pending after {} on this rank (jccl.stallReport): {}; it fails at its timeout ({})",
                w.describe(), Duration.ofNanos(stallReportNanos), diagnosis("it waits for the other ranks to issue it"
                        + " (check that every rank issues the same operations in the same order)"),
                w.timeout().isZero() ? "none" : w.timeout());
    }

    private void timedOut(TrackedWork w) {
        String waitingFor = diagnosis("check that every rank issues the same operations in the same order");
        WorkTimeoutException e = new WorkTimeoutException("still pending after " + w.timeout() + " on this rank: "
                + waitingFor, -1, null, null, w.describe(), null);
        JfrEvents.timeout(id, driverComm.rank(), driverComm.size(), w.sequence(), w.describe(), w.timeout().toNanos(),
                waitingFor, abortOnTimeout);
        if (abortOnTimeout) {
            CommunicatorState[] all = w.participants();
            LOG.error("{}; aborting the communicator{}", e.getMessage(), all.length > 1 ? " and the work's other " + (all.length - 1) : "");
            w.fail(e);
            CommunicatorAbortedException cause = new CommunicatorAbortedException("aborted: seq=" + w.sequence()
                    + " timed out after " + w.timeout(), -1, null, null, null, e);
            // A work over several communicators (a group, a step) may be stuck on any of them, and whichever one's
            // deadline check runs first reports it: abort them all, so that nothing it started is left waiting.
            abort(cause);
            for (CommunicatorState c : all) if (c != this) c.abort(cause);
        } else {
            LOG.warn("{}", e.getMessage());
            w.fail(e);
        }
    }

    @Override
    public String toString() {
        return label;
    }
}
