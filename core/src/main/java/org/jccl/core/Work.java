package org.jccl.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jccl.core.spi.DriverEvent;
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
 * executor is given: never block in them.
 *
 * <p>A work holds its buffers' memory until its event completes, even if its future failed earlier (a timeout
 * or an abort): the GPU may still be using them.
 */
public final class Work extends CompletableFuture<Void> {
    private final long sequence;
    private final Describer describer;
    private @Nullable String description;
    private final @Nullable Communicator communicator;
    private final MemoryBlock[] held;
    private final long deadlineNanos;
    private final long timeoutNanos;
    private @Nullable DriverEvent event;
    private @Nullable Stream stream;
    private boolean timeoutReported;
    private Communicator[] participants = NONE;
    private static final Communicator[] NONE = new Communicator[0];

    /** Makes a work's description when one is needed (messages, logs): not on the hot path. */
    interface Describer {
        String describe();
    }

    Work(long sequence, String description, @Nullable Communicator communicator, MemoryBlock[] held, long timeoutNanos) {
        this(sequence, () -> description, communicator, held, timeoutNanos);
    }

    Work(long sequence, Describer describer, @Nullable Communicator communicator, MemoryBlock[] held, long timeoutNanos) {
        this.sequence = sequence;
        this.describer = describer;
        this.communicator = communicator;
        this.held = held;
        long now = System.nanoTime();
        this.timeoutNanos = Math.max(0, timeoutNanos);
        this.deadlineNanos = timeoutNanos <= 0 || timeoutNanos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + timeoutNanos;
        for (MemoryBlock block : held) block.retain();
    }

    /** The communicator's sequence number of this work (its issue order), or -1 for stream work. */
    public long sequence() {
        return sequence;
    }

    /** e.g. {@code [comm=3f2a rank=1/2] allReduce(seq=17, count=1048576, float32, sum)}. */
    public String describe() {
        String d = description;
        if (d == null) description = d = describer.describe();
        return d;
    }

    /** The communicator that issued this work, or null for plain stream work (copies, fills, markers). */
    public @Nullable Communicator communicator() {
        return communicator;
    }

    @Override
    public String toString() {
        return describe() + (isDone() ? (isCompletedExceptionally() ? " [failed]" : " [done]") : " [pending]");
    }

    // ---- engine side

    /** Every communicator this work belongs to (more than one for a group over several communicators). */
    Communicator[] participants() {
        return participants;
    }

    void participants(Communicator[] communicators) {
        this.participants = communicators;
    }

    void launched(DriverEvent event, Stream stream) {
        this.event = event;
        this.stream = stream;
    }

    @Nullable DriverEvent event() {
        return event;
    }

    @Nullable Stream stream() {
        return stream;
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    /** This work's own timeout (the communicator's, or the one given to {@code submit}); 0 for none. */
    java.time.Duration timeout() {
        return java.time.Duration.ofNanos(timeoutNanos);
    }

    /** True once, the first time the deadline is reported, so a timeout is handled once. */
    boolean markTimeoutReported() {
        if (timeoutReported) return false;
        timeoutReported = true;
        return true;
    }

    /** Completes successfully, unless the future already failed (a timeout or an abort got there first). */
    boolean succeed() {
        return super.complete(null);
    }

    boolean fail(Throwable error) {
        return super.completeExceptionally(error);
    }

    /** The GPU is done with the memory: drops the references taken at creation. Called once. */
    void releaseMemory() {
        for (MemoryBlock block : held) block.release();
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
