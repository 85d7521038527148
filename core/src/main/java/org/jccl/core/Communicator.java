package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.SerialWorker;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank of a communicator: an NCCL/RCCL {@code ncclComm_t} or a host-backend rank.
 *
 * <h2>The same-order rule</h2>
 * Every rank must issue the same collectives in the same order, as NCCL requires; a mismatch hangs until the
 * timeout ({@link CommOptions}). Operations launch in the order they are called (one launch thread per
 * communicator), so call from one thread, or chain calls ({@code thenCompose}, Reactor's {@code concatMap}).
 *
 * <h2>Asynchrony</h2>
 * Every operation returns at once with a {@link Work}, which completes on jccl's event thread when the event
 * recorded after the operation completes. Arguments are checked first: a bad call throws
 * {@link InvalidArgumentException} and enqueues nothing. After an abort (by the user, a timeout, or the first async
 * error) every pending and later work fails with the cause's type.
 *
 * <h2>Lifetime</h2>
 * {@link #close()} drains pending work (up to {@link CommOptions#closeTimeout()}), then finalizes and destroys;
 * it is idempotent. {@link #abort()} never blocks the caller.
 */
public final class Communicator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Communicator.class);

    private enum State { OPEN, CLOSING, CLOSED, ABORTED }

    private final Backend backend;
    private final DriverComm driverComm;
    private final String id;
    private final String label;
    private final CommOptions options;
    private final SerialWorker launchQueue;
    private final Stream stream;
    private final Set<Work> pending = ConcurrentHashMap.newKeySet();
    private final Object submitLock = new Object();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final CompletableFuture<Void> aborted = new CompletableFuture<>();
    private volatile State state = State.OPEN;
    private volatile @Nullable JcclException failure;
    private long sequence;
    /** Whether the launch thread is inside a library call for this communicator (written by it, read by the event thread). */
    private volatile boolean inLibrary;
    private @Nullable CompletableFuture<Void> drained;

    Communicator(Backend backend, DriverComm driverComm, String id, CommOptions options, SerialWorker launchQueue) {
        this.backend = backend;
        this.driverComm = driverComm;
        this.id = id;
        this.options = options;
        this.launchQueue = launchQueue;
        this.label = "[comm=" + id + " rank=" + driverComm.rank() + "/" + driverComm.size() + "]";
        this.stream = backend.createStream(driverComm.device());
        backend.engine().loop().register(this);
    }

    // ---- queries

    public int rank() {
        return driverComm.rank();
    }

    public int size() {
        return driverComm.size();
    }

    /** The device; -1 on the host backend. */
    public int device() {
        return driverComm.device();
    }

    public Backend backend() {
        return backend;
    }

    /** The stream this communicator's operations run on. */
    public Stream stream() {
        return stream;
    }

    public CommOptions options() {
        return options;
    }

    /** A short id shared by all ranks of this communicator, as messages show it ({@code comm=3f2a}). */
    public String id() {
        return id;
    }

    /** e.g. {@code [comm=3f2a rank=1/2]}, the prefix of every message about this communicator. */
    public String describe() {
        return label;
    }

    /** The error that aborted this communicator, if it was aborted. */
    public @Nullable JcclException failure() {
        return failure;
    }

    public boolean isOpen() {
        return state == State.OPEN;
    }

    /** The number of works issued and not yet seen complete. */
    public int pendingCount() {
        return pending.size();
    }

    /** {@code ncclGetLastError} for this communicator, or null. */
    public @Nullable String lastError() {
        return driverComm.lastError();
    }

    @Override
    public String toString() {
        return label;
    }

    // ---- operations: each validates, then queues exactly one launch

    /** Reduces {@code count} elements across ranks; every rank receives the result. */
    public Work allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op) {
        return submit(Operation.allReduce(send, recv, count, type, op));
    }

    /** Copies {@code count} elements from {@code root}'s send buffer to every rank's receive buffer. */
    public Work broadcast(Buffer send, Buffer recv, long count, DataType type, int root) {
        return submit(Operation.broadcast(send, recv, count, type, root));
    }

    /** Reduces {@code count} elements across ranks into {@code root}'s receive buffer. */
    public Work reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root) {
        return submit(Operation.reduce(send, recv, count, type, op, root));
    }

    /** Gathers {@code sendCount} elements from each rank into every rank's receive buffer, in rank order. */
    public Work allGather(Buffer send, Buffer recv, long sendCount, DataType type) {
        return submit(Operation.allGather(send, recv, sendCount, type));
    }

    /** Reduces {@code recvCount × size()} elements; rank {@code r} receives block {@code r} of the result. */
    public Work reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op) {
        return submit(Operation.reduceScatter(send, recv, recvCount, type, op));
    }

    /** Gathers {@code sendCount} elements from each rank into {@code root}'s receive buffer. */
    public Work gather(Buffer send, Buffer recv, long sendCount, DataType type, int root) {
        return submit(Operation.gather(send, recv, sendCount, type, root));
    }

    /** Sends block {@code r} of {@code root}'s send buffer ({@code recvCount} elements) to rank {@code r}. */
    public Work scatter(Buffer send, Buffer recv, long recvCount, DataType type, int root) {
        return submit(Operation.scatter(send, recv, recvCount, type, root));
    }

    /** Sends block {@code j} of {@code count} elements to rank {@code j} and receives block {@code j} from it. */
    public Work allToAll(Buffer send, Buffer recv, long count, DataType type) {
        return submit(Operation.allToAll(send, recv, count, type));
    }

    /** All-to-all with per-peer counts and displacements, in elements (RCCL's {@code ncclAllToAllv}). */
    public Work allToAllv(Buffer send, long[] sendCounts, long[] sendDisplacements, Buffer recv, long[] recvCounts,
                          long[] recvDisplacements, DataType type) {
        return submit(Operation.allToAllv(send, sendCounts, sendDisplacements, recv, recvCounts, recvDisplacements, type));
    }

    /** The reduction across ranks combined with {@code bias} (RCCL's {@code ncclAllReduceWithBias}). */
    public Work allReduceWithBias(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Buffer bias) {
        return submit(Operation.allReduceWithBias(send, recv, count, type, op, bias));
    }

    /** Sends {@code count} elements to {@code peer}, which must issue the matching {@link #recv}. */
    public Work send(Buffer send, long count, DataType type, int peer) {
        return submit(Operation.send(send, count, type, peer));
    }

    /** Receives {@code count} elements from {@code peer}. */
    public Work recv(Buffer recv, long count, DataType type, int peer) {
        return submit(Operation.recv(recv, count, type, peer));
    }

    /** Validates and issues one operation. */
    public Work submit(Operation operation) {
        return submit(operation, options.timeout());
    }

    /** Validates and issues one operation with its own timeout (zero: none) in place of the communicator's. */
    public Work submit(Operation operation, Duration timeout) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(timeout, "timeout");
        Validation.check(this, operation);
        return new Group.Launch(List.of(this), List.of(List.of(operation)), timeout).issue();
    }

    /**
     * Issues several operations of this communicator between one {@code ncclGroupStart}/{@code ncclGroupEnd}; one
     * work completes when all have. A send and a recv in one group never deadlock. See {@link Group} for groups
     * over several communicators.
     */
    public Work submitGroup(List<Operation> operations) {
        Objects.requireNonNull(operations, "operations");
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        for (Operation op : operations) Validation.check(this, Objects.requireNonNull(op, "operation"));
        return new Group.Launch(List.of(this), List.of(List.copyOf(operations)), options.timeout()).issue();
    }

    // ---- communicator-level operations, in issue order on the launch thread

    /**
     * {@code ncclCommSplit}: a collective over this communicator; ranks giving the same {@code color} form a new
     * communicator, ordered by {@code key} then by rank. Ranks that join none call {@link #splitExcluded()}.
     */
    public CompletableFuture<Communicator> split(int color, int key, CommConfig config, CommOptions options) {
        if (color < 0) throw new InvalidArgumentException("color must be >= 0 (use splitExcluded() to join no group), not " + color);
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(options, "options");
        return onLaunchThread("split", () -> {
            DriverComm child = driverComm.split(color, key, config);
            if (child == null) throw new JcclException("ncclCommSplit returned no communicator for color " + color);
            return child;
        }).thenCompose(child -> backend.adopt(child, id + "." + Integer.toHexString(color), config, options));
    }

    /** {@link #split} with the default configuration and options. */
    public CompletableFuture<Communicator> split(int color, int key) {
        return split(color, key, CommConfig.DEFAULT, options);
    }

    /** Takes part in a split without joining a new communicator ({@code NCCL_SPLIT_NOCOLOR}). */
    public CompletableFuture<Void> splitExcluded() {
        return onLaunchThread("split", () -> {
            driverComm.split(DriverConstants.SPLIT_NO_COLOR, 0, CommConfig.DEFAULT);
            return null;
        });
    }

    /**
     * {@code ncclCommShrink}: a new communicator of the ranks not in {@code excludedRanks}, e.g. after a failure.
     * Called by every remaining rank.
     */
    public CompletableFuture<Communicator> shrink(int[] excludedRanks, CommConfig config, CommOptions options) {
        Objects.requireNonNull(excludedRanks, "excludedRanks");
        Objects.requireNonNull(config, "config");
        int[] excluded = excludedRanks.clone();
        for (int r : excluded) {
            if (r < 0 || r >= size()) throw new InvalidArgumentException("excluded rank " + r + " is outside 0.." + (size() - 1));
            if (r == rank()) throw new InvalidArgumentException("rank " + r + " cannot exclude itself from a shrink");
        }
        backend.driver().features().require("ncclCommShrink");
        boolean abortFirst = state == State.ABORTED;
        return onLaunchThread("shrink", () -> driverComm.shrink(excluded, config, abortFirst))
                .thenCompose(child -> backend.adopt(child, id + "-s", config, options));
    }

    /**
     * {@code ncclCommSuspend}: releases the communicator's dynamic GPU memory while it is idle (NCCL 2.29+), in issue
     * order after the work already issued; use {@link #resume()} before the next operation.
     */
    public CompletableFuture<Void> suspend() {
        backend.driver().features().require("ncclCommSuspend");
        return onLaunchThread("suspend", () -> {
            driverComm.suspend(DriverComm.SUSPEND_MEMORY);
            return null;
        });
    }

    /** {@code ncclCommResume}: restores what {@link #suspend()} released. */
    public CompletableFuture<Void> resume() {
        backend.driver().features().require("ncclCommResume");
        return onLaunchThread("resume", () -> {
            driverComm.resume();
            return null;
        });
    }

    /** {@code ncclCommMemStats}: the GPU memory the library tracks for this communicator. */
    public CompletableFuture<CommMemoryStats> memStats() {
        backend.driver().features().require("ncclCommMemStats");
        return onLaunchThread("memStats", driverComm::memStats);
    }

    /**
     * {@code ncclCommRevoke}: stops this communicator's in-flight operations so that it can be shrunk or destroyed.
     * Runs on its own thread, not behind the launch queue, since the launch thread may be the one that is stuck.
     */
    public CompletableFuture<Void> revoke() {
        backend.driver().features().require("ncclCommRevoke");
        checkOpen();
        return CompletableFuture.runAsync(() -> driverComm.revoke(0), r -> {
            Thread t = new Thread(r, "jccl-revoke-" + id + "-r" + rank());
            t.setDaemon(true);
            t.start();
        });
    }

    /** {@code ncclCommGetUniqueId}: the id ranks outside this communicator use to join it through {@link #grow}. */
    public CompletableFuture<UniqueId> growUniqueId() {
        backend.driver().features().require("ncclCommGetUniqueId");
        return onLaunchThread("growUniqueId", () -> UniqueId.fromBytes(driverComm.growUniqueId()));
    }

    /**
     * {@code ncclCommGrow}, called by every current rank: a new communicator of {@code newSize} ranks that new ranks
     * join with {@link Backend#initRank} and the id from {@link #growUniqueId()}. The rank that made the id passes it.
     */
    public CompletableFuture<Communicator> grow(int newSize, @Nullable UniqueId id, CommConfig config, CommOptions options) {
        if (newSize <= size()) throw new InvalidArgumentException("grow needs more than " + size() + " ranks, not " + newSize);
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(options, "options");
        backend.driver().features().require("ncclCommGrow");
        byte[] bytes = id == null ? null : id.toBytes();
        return onLaunchThread("grow", () -> driverComm.grow(newSize, bytes, config))
                .thenCompose(child -> backend.adopt(child, this.id + "+g", config, options));
    }

    /** A {@link PreMulSum} with a host scalar, for operations of {@code type} on this communicator. */
    public CompletableFuture<PreMulSum> createPreMulSum(double scalar, DataType type) {
        Objects.requireNonNull(type, "type");
        checkOpen();
        return onLaunchThread("createPreMulSum",
                () -> new PreMulSum(driverComm.createPreMulSum(scalar, null, 0, type), this, type, scalar, null));
    }

    /** A {@link PreMulSum} whose scalar is one element of {@code type} at the start of {@code scalar} (device memory). */
    public CompletableFuture<PreMulSum> createPreMulSum(Buffer scalar, DataType type) {
        Objects.requireNonNull(scalar, "scalar");
        Objects.requireNonNull(type, "type");
        checkOpen();
        scalar.checkOpen();
        if (scalar.byteSize() < type.size()) throw new InvalidArgumentException("scalar buffer " + scalar + " holds no " + type);
        if (scalar.device() != device()) throw new InvalidArgumentException("scalar " + scalar + " is not on device " + device());
        return onLaunchThread("createPreMulSum", () -> new PreMulSum(
                driverComm.createPreMulSum(0, scalar.memoryBlock(), scalar.offset(), type), this, type, 0, scalar));
    }

    void destroyReduceOp(PreMulSum op) {
        if (state == State.OPEN || state == State.CLOSING) {
            launchQueue.submit(() -> driverComm.destroyReduceOp(op.code()));
        }
    }

    /** {@code ncclCommRegister}: registers {@code buffer} for zero-copy use; close the registration to deregister. */
    public CompletableFuture<Registration> register(Buffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        checkOpen();
        buffer.checkOpen();
        if (buffer.device() != device()) throw new InvalidArgumentException(buffer + " is not on device " + device());
        MemoryBlock block = buffer.memoryBlock();
        block.retain();
        return onLaunchThread("register", () -> driverComm.register(block, buffer.offset(), buffer.byteSize()))
                .handle((handle, error) -> {
                    if (error != null) {
                        block.release();
                        throw unwrap(error);
                    }
                    return new Registration(this, buffer, handle);
                });
    }

    void deregister(Registration registration) {
        if (state == State.OPEN || state == State.CLOSING) {
            launchQueue.submit(() -> {
                try {
                    driverComm.deregister(registration.handle());
                } finally {
                    registration.buffer().memoryBlock().release();
                }
            });
        } else {
            registration.buffer().memoryBlock().release();
        }
    }

    // ---- lifetime

    /**
     * Drains pending work (up to the close timeout), then finalizes and destroys; aborts instead if draining
     * times out. Blocks the caller until done: use {@link #closeAsync()} on threads that must not block.
     * Idempotent.
     */
    @Override
    public void close() {
        Duration limit = options.closeTimeout().plus(JcclSettings.abortTimeout()).plusSeconds(5);
        try {
            closeAsync().get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (TimeoutException e) {
            throw new WorkTimeoutException(label + " close did not finish within " + limit);
        }
    }

    /** {@link #close()} without blocking: the future completes when the communicator is destroyed. */
    public CompletableFuture<Void> closeAsync() {
        CompletableFuture<Void> toDrain;
        synchronized (submitLock) {
            if (state == State.ABORTED) return aborted.exceptionally(e -> null);
            if (state != State.OPEN) return closed;
            state = State.CLOSING;
            toDrain = drained = new CompletableFuture<>();
            if (pending.isEmpty()) toDrain.complete(null);
        }
        toDrain.orTimeout(options.closeTimeout().toMillis(), TimeUnit.MILLISECONDS).whenComplete((v, timeout) -> {
            if (timeout != null) {
                LOG.warn("{} close: pending work did not drain within {}; aborting", label, options.closeTimeout());
                abort(new CommunicatorAbortedException("closed with work still pending after "
                        + options.closeTimeout())).whenComplete((x, e) -> closed.complete(null));
                return;
            }
            launchQueue.submit(() -> {
                try {
                    driverComm.finalizeComm();
                    driverComm.destroy();
                    synchronized (submitLock) {
                        state = State.CLOSED;
                    }
                    closed.complete(null);
                } catch (Throwable t) {
                    closed.completeExceptionally(t);
                } finally {
                    release();
                }
            });
        });
        return closed;
    }

    /**
     * {@code ncclCommAbort}: fails every pending work with {@link CommunicatorAbortedException} and frees the
     * communicator. Runs the library's abort on its own thread; the future completes when it returned, or fails
     * after {@code jccl.abortTimeout} if it hangs. Never blocks the caller. Idempotent.
     */
    public CompletableFuture<Void> abort() {
        return abort(new CommunicatorAbortedException("aborted by the application"));
    }

    CompletableFuture<Void> abort(JcclException cause) {
        synchronized (submitLock) {
            if (state == State.ABORTED || state == State.CLOSED) return aborted;
            state = State.ABORTED;
            failure = cause;
        }
        List<Work> inIssueOrder = new ArrayList<>(pending);
        inIssueOrder.sort(Comparator.comparingLong(Work::sequence));
        for (Work w : inIssueOrder) failPending(w, cause);
        Thread aborter = new Thread(() -> {
            try {
                driverComm.abort();
                aborted.complete(null);
            } catch (Throwable t) {
                aborted.completeExceptionally(t);
            } finally {
                release();
            }
        }, "jccl-abort-" + id + "-r" + rank());
        aborter.setDaemon(true);
        aborter.start();
        Duration limit = JcclSettings.abortTimeout();
        aborted.orTimeout(limit.toMillis(), TimeUnit.MILLISECONDS).exceptionally(e -> {
            if (e instanceof TimeoutException) LOG.error("{} ncclCommAbort did not return within {}", label, limit);
            return null;
        });
        return aborted;
    }

    private void release() {
        launchQueue.stop();
        backend.engine().loop().unregister(this);
        // The stream may still hold events of aborted work; the event thread keeps polling them, which the runtime
        // allows after the stream is destroyed.
        stream.close();
    }

    // ---- engine side

    /**
     * Queues the launch of a prepared work; called by {@link Group} under this communicator's submit lock so that
     * sequence numbers follow issue order.
     */
    Object submitLock() {
        return submitLock;
    }

    /** The next sequence number; call with the submit lock held. */
    long nextSequence() {
        return ++sequence;
    }

    /** Accepts a work for this communicator, or says why not; call with the submit lock held. */
    @Nullable JcclException admit(Work work) {
        if (state == State.ABORTED) return failure;
        if (state != State.OPEN) return new InvalidUsageException("the communicator is closed");
        pending.add(work);
        // Its launch may block inside the library before any event is recorded: the event thread must be awake to
        // watch the deadline.
        backend.engine().loop().wake();
        return null;
    }

    SerialWorker launchQueue() {
        return launchQueue;
    }

    /** Marks the launch thread as inside (or out of) a library call for this communicator. */
    void inLibrary(boolean inside) {
        inLibrary = inside;
    }

    DriverComm driverComm() {
        return driverComm;
    }

    boolean hasPendingWork() {
        return !pending.isEmpty();
    }

    /** The event thread saw {@code w} complete (or it failed to launch). */
    void finished(Work w) {
        if (pending.remove(w) && pending.isEmpty()) {
            CompletableFuture<Void> d = drained;
            if (d != null) d.complete(null);
        }
    }

    /**
     * Called on the event thread when one of this communicator's works saw its event complete: the failure that
     * voids it, if the communicator was aborted or reports an async error (which then aborts it), else null.
     */
    @Nullable JcclException failureAfterCompletion() {
        JcclException f = failure;
        if (f != null) return f;
        checkAsyncError();
        return failure;
    }

    /** Called on the event thread while work is pending: the first async error aborts the communicator. */
    void checkAsyncError() {
        if (state == State.ABORTED) return;
        if (inLibrary && !driverComm.asyncErrorSafeDuringLaunch()) return;
        int code = driverComm.asyncError();
        if (code == Errors.SUCCESS || code == Errors.IN_PROGRESS) return;
        JcclException e = Errors.fromResult("the communicator's async error", code, backend.driver().resultString(code),
                driverComm.lastError(), label);
        LOG.error("{}; aborting the communicator and failing {} pending work(s)", e.getMessage(), pending.size());
        abort(e);
    }

    /** Called on the event thread: applies the timeout policy to each pending work past its deadline, oldest first. */
    void checkDeadlines(long now) {
        List<Work> late = null;
        for (Work w : pending) {
            if (now - w.deadlineNanos() > 0 && !w.isDone()) {
                if (late == null) late = new ArrayList<>();
                late.add(w);
            }
        }
        if (late == null) return;
        late.sort(Comparator.comparingLong(Work::sequence));
        for (Work w : late) {
            if (state == State.ABORTED) return;
            if (w.markTimeoutReported()) timedOut(w);
        }
    }

    /** Called on the event thread when {@code w} passed its deadline. */
    void timedOut(Work w) {
        WorkTimeoutException e = new WorkTimeoutException("still pending after " + w.timeout()
                + " on this rank: check that every rank issues the same operations in the same order",
                -1, null, null, w.describe(), null);
        if (options.timeoutPolicy() == TimeoutPolicy.ABORT_COMMUNICATOR) {
            LOG.error("{}; aborting the communicator", e.getMessage());
            w.fail(e);
            abort(new CommunicatorAbortedException("aborted: seq=" + w.sequence() + " timed out after " + w.timeout(),
                    -1, null, null, null, e));
        } else {
            LOG.warn("{}", e.getMessage());
            w.fail(e);
        }
    }

    void failPending(Work w, JcclException cause) {
        w.fail(Errors.forWork(cause, w.describe()));
    }

    void checkOpen() {
        if (state == State.ABORTED) {
            JcclException f = failure;
            throw f != null ? Errors.forWork(f, label) : new CommunicatorAbortedException(label + ": aborted");
        }
        if (state != State.OPEN) throw new InvalidUsageException(label + " is closed");
    }

    /** Runs {@code task} on the launch thread, in issue order; the future carries its result. */
    <T> CompletableFuture<T> onLaunchThread(String what, Supplier<T> task) {
        checkOpen();
        CompletableFuture<T> result = new CompletableFuture<>();
        launchQueue.submit(() -> {
            JcclException f = failure;
            if (f != null) {
                result.completeExceptionally(Errors.forWork(f, label + " " + what));
                return;
            }
            T value;
            inLibrary = true;
            try {
                value = task.get();
            } catch (Throwable t) {
                result.completeExceptionally(t);
                return;
            } finally {
                inLibrary = false;
            }
            result.complete(value);
        });
        return result;
    }

    static RuntimeException unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof java.util.concurrent.CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof RuntimeException r) return r;
        if (c instanceof Error e) throw e;
        return new JcclException(c.toString(), c);
    }

    /** Every open communicator's pending work, for diagnostics. */
    List<Work> pendingWork() {
        return new ArrayList<>(pending);
    }
}
