package org.jccl.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.engine.TrackedWork;
import org.jccl.core.jfr.JfrEvents;
import org.jccl.core.jfr.OperationEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jspecify.annotations.Nullable;

/**
 * One issued operation: a {@link java.util.concurrent.CompletionStage} that completes when the event recorded
 * after the operation on its stream completes, as seen by jccl's event thread.
 *
 * <p>Only jccl completes a {@code Work}: {@code complete}, {@code completeExceptionally}, {@code obtrude*},
 * {@code orTimeout} and {@code completeOnTimeout} throw {@link UnsupportedOperationException}, and
 * {@link #cancel(boolean)} returns false, because work already enqueued on a GPU stream runs to completion.
 * Timeouts are the communicator's ({@link CommOptions}). Dependent stages run on the event thread unless an
 * executor is given: never block in them — {@link #join()} and {@link #get()} there throw
 * {@link IllegalStateException} instead of stalling every completion of the process.
 *
 * <p>A work holds its buffers' memory until its event completes, even if its future failed earlier (a timeout
 * or an abort): the GPU may still be using them. The communicator's books ({@link Communicator#pendingCount()})
 * are updated before the work completes.
 */
public final class Work extends TrackedWork {
    private final @Nullable Describer describer;
    private @Nullable String description;
    private final @Nullable Communicator communicator;
    private final String operation;
    private final long bytes;
    /** A single core operation issued alone: the operation (which names it) and its lowered form (which launches it). */
    private final @Nullable Operation single;
    private final @Nullable LaunchOp lowered;
    /** A part issued alone (a module's operation, a step's replay): what it enqueues and how it is named. */
    private final @Nullable SubmissionPart part;
    /** The observers told of the issue, with the time; null while unobserved, and again once completion was told. */
    private WorkObserver @Nullable [] observedBy;
    private long issuedNanos;
    /** Its JFR event from issue to completion, while a recording wants it; null otherwise. */
    private @Nullable OperationEvent recorded;

    /** Makes a work's description when one is needed (messages, logs): not on the hot path. */
    interface Describer {
        String describe();
    }

    /** Stream work (a copy, a fill, a marker): never seen by observers. */
    Work(long sequence, Describer describer, @Nullable Communicator communicator, MemoryBlock[] held, long timeoutNanos) {
        this(sequence, describer, communicator, "stream", 0, held, timeoutNanos);
    }

    /**
     * Work issued in parts (a group, a step over several communicators).
     *
     * @param operation what observers see as its name: the method ({@code allReduce}), {@code group}, or a module's
     * @param bytes     the data it moves, as {@link #bytes()} defines it
     */
    Work(long sequence, Describer describer, @Nullable Communicator communicator, String operation, long bytes,
         MemoryBlock[] held, long timeoutNanos) {
        super(sequence, held, timeoutNanos);
        this.describer = describer;
        this.communicator = communicator;
        this.operation = operation;
        this.bytes = bytes;
        this.single = null;
        this.lowered = null;
        this.part = null;
    }

    /** One validated core operation issued alone ({@link org.jccl.core.engine.IssuePath#issueOne}). */
    Work(Communicator communicator, Operation single, LaunchOp lowered, MemoryBlock[] held, long bytes, long timeoutNanos) {
        super(0, held, timeoutNanos);
        this.describer = null;
        this.communicator = communicator;
        this.operation = single.kind().method();
        this.bytes = bytes;
        this.single = single;
        this.lowered = lowered;
        this.part = null;
    }

    /** One part issued alone: a module's operation, a step's replay; {@code operation} as observers see it. */
    Work(Communicator communicator, SubmissionPart part, String operation, long timeoutNanos) {
        super(0, part.held(), timeoutNanos);
        this.describer = null;
        this.communicator = communicator;
        this.operation = operation;
        this.bytes = part.bytes();
        this.single = null;
        this.lowered = null;
        this.part = part;
    }

    @Override
    protected void enqueue(DriverStream stream) {
        if (lowered != null) {
            CommunicatorState state = communicator().state();
            state.driver().launch(state.driverComm(), lowered, stream);
        } else if (part != null) {
            part.enqueue().enqueue(stream);
        } else {
            super.enqueue(stream);
        }
    }

    /** A timeout as the engine takes it: nanoseconds, saturating at {@code Long.MAX_VALUE} (zero: none). */
    static long nanos(java.time.Duration timeout) {
        return timeout.compareTo(java.time.Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : timeout.toNanos();
    }

    /** e.g. {@code [comm=3f2a rank=1/2] allReduce(seq=17, count=1048576, float32, sum)}. */
    @Override
    public String describe() {
        String d = description;
        if (d == null) description = d = describeNow();
        return d;
    }

    private String describeNow() {
        if (describer != null) return describer.describe();
        String name = single != null ? single.describe(sequence()) : part != null ? part.describe(sequence()) : operation;
        return communicator == null ? name : communicator.describe() + " " + name;
    }

    /** The communicator that issued this work, or null for plain stream work (copies, fills, markers). */
    public @Nullable Communicator communicator() {
        return communicator;
    }

    /**
     * The operation's name as metrics tag it: the method of a single operation ({@code allReduce}, {@code send}),
     * {@code group} for a group call, a module's own name for its operations (e.g. {@code putSignal}).
     */
    public String operation() {
        return operation;
    }

    /**
     * The data this rank's part of the work moves, in bytes: for each operation its count argument times the element
     * size, as the libraries take the count (per rank for allGather and reduceScatter, per peer for allToAll, the sum
     * of the send counts for allToAllv); zero for modules' operations.
     */
    public long bytes() {
        return bytes;
    }

    @Override
    protected void issued() {
        if (JfrEvents.operationWanted()) recorded = beginEvent();
        WorkObserver[] to = WorkObservers.current();
        if (to.length == 0) return;
        issuedNanos = System.nanoTime();
        observedBy = to;
        WorkObservers.issued(to, this);
    }

    private @Nullable OperationEvent beginEvent() {
        Communicator c = communicator;
        if (c == null) return null;
        return JfrEvents.operationIssued(c.id(), c.rank(), c.size(), sequence(), operation, bytes,
                single == null ? null : single.type().toString(), single == null ? -1 : single.peer());
    }

    @Override
    protected void launchReturned() {
        OperationEvent e = recorded;
        if (e != null) e.launchReturned();
    }

    @Override
    protected void completing(@Nullable Throwable error) {
        // The engine calls this once, from the completion that settles the work.
        OperationEvent e = recorded;
        if (e != null) {
            recorded = null;
            e.completed(error);
        }
        WorkObserver[] to = observedBy;
        if (to == null) return;
        observedBy = null;
        WorkObservers.completed(to, this, error, System.nanoTime() - issuedNanos);
    }

    @Override
    public String toString() {
        return describe() + (isDone() ? (isCompletedExceptionally() ? " [failed]" : " [done]") : " [pending]");
    }

    // ---- waiting: never on the event thread, which is the thread that would complete the work

    /** Waits for completion; throws {@link IllegalStateException} on jccl's event thread. */
    @Override
    public Void join() {
        if (!isDone()) EventLoop.checkNotEventThread("Work.join()");
        return super.join();
    }

    /** Waits for completion; throws {@link IllegalStateException} on jccl's event thread. */
    @Override
    public Void get() throws InterruptedException, ExecutionException {
        if (!isDone()) EventLoop.checkNotEventThread("Work.get()");
        return super.get();
    }

    /** Waits at most {@code timeout}; throws {@link IllegalStateException} on jccl's event thread. */
    @Override
    public Void get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
        if (!isDone()) EventLoop.checkNotEventThread("Work.get(timeout)");
        return super.get(timeout, unit);
    }

    // ---- a Work is completed by jccl only

    @Override
    public boolean complete(Void value) {
        throw new UnsupportedOperationException("a Work completes when its stream event does; it cannot be completed by hand");
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        throw new UnsupportedOperationException("a Work completes when its stream event does; it cannot be failed by hand");
    }

    /** Returns false: enqueued work runs to completion on the GPU. Detach by ignoring the result. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return false;
    }

    @Override
    public void obtrudeValue(Void value) {
        throw new UnsupportedOperationException("a Work's outcome cannot be replaced");
    }

    @Override
    public void obtrudeException(Throwable ex) {
        throw new UnsupportedOperationException("a Work's outcome cannot be replaced");
    }

    @Override
    public CompletableFuture<Void> completeAsync(Supplier<? extends Void> supplier, Executor executor) {
        throw new UnsupportedOperationException("a Work completes when its stream event does");
    }

    @Override
    public CompletableFuture<Void> orTimeout(long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("set timeouts with CommOptions; or use toCompletableFuture().orTimeout(..)");
    }

    @Override
    public CompletableFuture<Void> completeOnTimeout(Void value, long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("set timeouts with CommOptions; or use toCompletableFuture().completeOnTimeout(..)");
    }

    /** Dependent stages are plain futures. */
    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    /** A plain future that completes with this work; completing it does not affect the work. */
    @Override
    public CompletableFuture<Void> toCompletableFuture() {
        return thenApply(v -> v);
    }
}
