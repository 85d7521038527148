package org.jccl.core.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jspecify.annotations.Nullable;

/**
 * What the engine knows of one issued work, and the only way it completes. The public {@code org.jccl.core.Work}
 * extends this class: the engine-side members are package-private here, so applications can neither complete a work
 * nor see its event, while the engine needs no access to the API package.
 *
 * <p>Memory: every block the work uses is retained at creation and released once, when the GPU is done with it
 * (its event completed, or it never launched) — even if the future failed earlier through a timeout or an abort.
 *
 * <p>The engine's queues link works through fields of their own here (the stream's pending works, the communicator's
 * pending set), so that tracking a work allocates nothing. A subclass that reports its outcome otherwise than through
 * the future ({@link #deliver}) may be issued again once the engine has let go of it ({@link #retired}, then
 * {@link #reuse}): a work issued without allocating anything.
 */
public abstract class TrackedWork extends CompletableFuture<Void> {
    private static final CommunicatorState[] NONE = new CommunicatorState[0];
    private static final VarHandle SETTLED;

    static {
        try {
            SETTLED = MethodHandles.lookup().findVarHandle(TrackedWork.class, "settled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Set at admission, under the submit lock, before the work is handed to any other thread. */
    private long sequence;
    private MemoryBlock[] held;
    private long deadlineNanos;
    private long timeoutNanos;
    /** When the work was made or last reused ({@link System#nanoTime()}), for the stall report. */
    private long createdNanos;
    private CommunicatorState[] participants = NONE;
    private @Nullable DriverEvent event;
    private @Nullable StreamQueue stream;
    private boolean timeoutReported;
    private boolean stallReported;
    /** Set by the first completion through {@link #SETTLED}; cleared only by {@link #reuse}. */
    private volatile boolean settled;
    /** The next work recorded on the same stream ({@link StreamQueue}). */
    private volatile @Nullable TrackedWork nextOnStream;
    /** The pending set whose links below this work uses, and those links ({@link PendingWorks}, under its lock). */
    @Nullable PendingWorks linkedIn;
    @Nullable TrackedWork pendingPrevious;
    @Nullable TrackedWork pendingNext;

    /**
     * @param sequence     the communicator's sequence number (issue order), -1 for stream work, or 0 for a work whose
     *                     admission gives it one ({@link IssuePath#issueOne})
     * @param held         memory kept alive until the work completes (retained here)
     * @param timeoutNanos the deadline from now; zero or less: none
     */
    protected TrackedWork(long sequence, MemoryBlock[] held, long timeoutNanos) {
        this.sequence = sequence;
        this.held = held;
        start(timeoutNanos);
    }

    /**
     * Makes a retired work new again, to be issued once more ({@link IssuePath#issueOne}): only by its owner, after
     * {@link #retired} and before it hands the work to the engine.
     */
    protected final void reuse(MemoryBlock[] uses, long timeoutNanos) {
        sequence = 0;
        held = uses;
        participants = NONE;
        event = null;
        stream = null;
        timeoutReported = false;
        stallReported = false;
        settled = false;
        start(timeoutNanos);
    }

    private void start(long timeout) {
        long now = System.nanoTime();
        createdNanos = now;
        timeoutNanos = Math.max(0, timeout);
        deadlineNanos = timeout <= 0 || timeout > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + timeout;
        for (MemoryBlock block : held) block.retain();
    }

    /** The communicator's sequence number of this work (its issue order), or -1 for stream work. */
    public long sequence() {
        return sequence;
    }

    /** e.g. {@code [comm=3f2a rank=1/2] allReduce(seq=17, count=1048576, float32, sum)}. */
    public abstract String describe();

    // ---- engine side (package-private)

    CommunicatorState[] participants() {
        return participants;
    }

    void participants(CommunicatorState[] states) {
        this.participants = states;
    }

    void sequence(long admitted) {
        this.sequence = admitted;
    }

    @Nullable TrackedWork nextOnStream() {
        return nextOnStream;
    }

    void nextOnStream(@Nullable TrackedWork next) {
        this.nextOnStream = next;
    }

    void launched(DriverEvent recorded, StreamQueue on) {
        this.event = recorded;
        this.stream = on;
    }

    @Nullable DriverEvent event() {
        return event;
    }

    @Nullable StreamQueue stream() {
        return stream;
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    /** This work's own timeout (the communicator's, or the one given at submission); zero for none. */
    Duration timeout() {
        return Duration.ofNanos(timeoutNanos);
    }

    long createdNanos() {
        return createdNanos;
    }

    /** True once, the first time the work is reported as stalled, so a stall is logged once. Event thread only. */
    boolean markStallReported() {
        if (stallReported) return false;
        stallReported = true;
        return true;
    }

    /** True once, the first time the deadline is reported, so a timeout is handled once. Event thread only. */
    boolean markTimeoutReported() {
        if (timeoutReported) return false;
        timeoutReported = true;
        return true;
    }

    /** Completes successfully, unless the future already failed (a timeout or an abort got there first). */
    boolean succeed() {
        if (!settle()) return false;
        completing(null);
        return deliver(null);
    }

    boolean fail(Throwable error) {
        if (!settle()) return false;
        completing(error);
        return deliver(error);
    }

    /** Whether the work has completed or failed (or is doing so), as the engine's first completion decided. */
    boolean isSettled() {
        return settled;
    }

    /**
     * Hands the outcome over, once: completes the future ({@code error} null) or fails it. A work whose owner takes
     * its outcome otherwise (a callback) overrides this and leaves the future alone.
     */
    protected boolean deliver(@Nullable Throwable error) {
        return error == null ? super.complete(null) : super.completeExceptionally(error);
    }

    /**
     * Called once the engine has let go of the work for good, after its outcome was delivered: its event completed
     * (or it never launched), its memory released, its books closed. A hook for owners that reuse works; a no-op here.
     * Must be cheap and must not block.
     */
    protected void retired() {
    }

    /**
     * True for the first of the engine's completions racing for this work (the event, a timeout, an abort), which
     * alone tells the observers and completes the future: what they record is what callers see.
     */
    private boolean settle() {
        return SETTLED.compareAndSet(this, false, true);
    }

    /**
     * Enqueues the work's operation on {@code stream}, on its communicator's launch thread: the launch of a work
     * issued alone ({@link IssuePath#issueOne}); works issued in parts never call it.
     */
    protected void enqueue(DriverStream stream) {
        throw new UnsupportedOperationException(describe() + " is issued in parts");
    }

    /**
     * Called once admission gave the work its sequence numbers, on the issuing thread under the submit lock: a hook
     * for observers (metrics), a no-op here. Must be cheap and must not block.
     */
    protected void issued() {
    }

    /**
     * Called on the launch thread once the library's enqueue returned, before the work is handed to the event thread:
     * a hook for observers (JFR), a no-op here. Not called for a work that never launched. Must be cheap.
     */
    protected void launchReturned() {
    }

    /**
     * Called just before the work completes ({@code error} null) or fails, once, by the completion that settles it, on
     * the completing thread (usually the event thread): a hook for observers, a no-op here. Must be cheap and must not
     * block.
     */
    protected void completing(@Nullable Throwable error) {
    }

    /** The GPU is done with the memory: drops the references taken at creation. Called once. */
    void releaseMemory() {
        for (MemoryBlock block : held) block.release();
    }
}
