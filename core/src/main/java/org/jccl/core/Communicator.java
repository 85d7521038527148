package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.StreamQueue;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.thread.SerialWorker;
import org.jspecify.annotations.Nullable;

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
    private final Backend backend;
    private final CommunicatorState state;
    private final String id;
    private final CommOptions options;
    private final Stream stream;
    /** Guards {@link #barrierByte} against a close racing its first allocation. */
    private final Object barrierLock = new Object();
    /** The byte {@link #barrier()} all-reduces: allocated on first use, freed when the communicator is released. */
    private @Nullable Buffer barrierByte;
    private boolean released;

    Communicator(Backend backend, DriverComm driverComm, String id, CommOptions options, SerialWorker launchQueue) {
        this.backend = backend;
        this.id = id;
        this.options = options;
        String label = "[comm=" + id + " rank=" + driverComm.rank() + "/" + driverComm.size() + "]";
        StreamQueue queue = backend.newStreamQueue(backend.driver().createStream(driverComm.device()));
        this.stream = new Stream(backend, queue, launchQueue);
        this.state = new CommunicatorState(backend.driver(), driverComm, id, label, launchQueue, queue,
                options.closeTimeout(), options.timeoutPolicy() == TimeoutPolicy.ABORT_COMMUNICATOR, this::release);
    }

    // ---- queries

    public int rank() {
        return state.driverComm().rank();
    }

    public int size() {
        return state.driverComm().size();
    }

    /** The device; -1 on the host backend. */
    public int device() {
        return state.driverComm().device();
    }

    public Backend backend() {
        return backend;
    }

    /**
     * The stream this communicator's operations run on. Copies, fills and markers issued on it go through the
     * communicator's launch queue, so they are ordered with its operations in call order.
     */
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
        return state.label();
    }

    /** The error that aborted this communicator, if it was aborted. */
    public @Nullable JcclException failure() {
        return state.failure();
    }

    public boolean isOpen() {
        return state.isOpen();
    }

    /** The number of works issued and not yet seen complete; updated before each work completes. */
    public int pendingCount() {
        return state.pendingCount();
    }

    /** {@code ncclGetLastError} for this communicator, or null. */
    public @Nullable String lastError() {
        return state.driverComm().lastError();
    }

    @Override
    public String toString() {
        return state.label();
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

    /**
     * Completes once every rank has called it (and, like any operation, once everything this rank issued before it
     * completed): an all-reduce (max) of one byte on a small buffer of the communicator's own, allocated on first use and
     * freed when the communicator closes. NCCL has no barrier of its own; this is what {@code torch.distributed.barrier}
     * does on NCCL too. Every rank must call it in the same place of its operation order, like any collective.
     */
    public Work barrier() {
        return barrier(options.timeout());
    }

    /** {@link #barrier()} with its own timeout (zero: none) in place of the communicator's. */
    public Work barrier(Duration timeout) {
        Errors.requireArgument(timeout, "timeout");
        Buffer b = barrierByte();
        Operation op = Operation.allReduce(b, b, 1, DataType.UINT8, ReduceOp.MAX);
        Validation.check(this, op);
        return Submission.named(this, op, "barrier", timeout);
    }

    private Buffer barrierByte() {
        state.checkOpen(); // a closed communicator allocates nothing
        synchronized (barrierLock) {
            if (released) state.checkOpen();
            if (barrierByte == null) barrierByte = backend.allocate(device(), 1);
            return barrierByte;
        }
    }

    /** Once the communicator is destroyed or aborted: its stream, and the barrier's byte once no work uses it. */
    private void release() {
        stream.release();
        Buffer b;
        synchronized (barrierLock) {
            released = true;
            b = barrierByte;
            barrierByte = null;
        }
        if (b != null) b.close();
    }

    /** Validates and issues one operation. */
    public Work submit(Operation operation) {
        return submit(operation, options.timeout());
    }

    /** Validates and issues one operation with its own timeout (zero: none) in place of the communicator's. */
    public Work submit(Operation operation, Duration timeout) {
        Errors.requireArgument(operation, "operation");
        Errors.requireArgument(timeout, "timeout");
        Validation.check(this, operation);
        return Submission.one(this, operation, timeout);
    }

    /**
     * Issues several operations of this communicator between one {@code ncclGroupStart}/{@code ncclGroupEnd}; one
     * work completes when all have. A send and a recv in one group never deadlock. See {@link Group} for groups
     * over several communicators.
     */
    public Work submitGroup(List<Operation> operations) {
        Errors.requireArgument(operations, "operations");
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        List<SubmissionPart> parts = new ArrayList<>(operations.size());
        for (Operation op : operations) {
            Validation.check(this, Errors.requireArgument(op, "operation"));
            parts.add(Submission.part(this, op));
        }
        return Submission.submit(List.of(this), List.of(parts), parts.size() == 1 ? operations.get(0).kind().method() : "group",
                options.timeout());
    }

    // ---- communicator-level operations, in issue order on the launch thread

    /**
     * {@code ncclCommSplit}: a collective over this communicator; ranks giving the same {@code color} form a new
     * communicator, ordered by {@code key} then by rank. Ranks that join none call {@link #splitExcluded()}.
     */
    public CompletableFuture<Communicator> split(int color, int key, CommConfig config, CommOptions options) {
        if (color < 0) throw new InvalidArgumentException("color must be >= 0 (use splitExcluded() to join no group), not " + color);
        Errors.requireArgument(config, "config");
        Errors.requireArgument(options, "options");
        return state.call("split", () -> {
            DriverComm child = state.driverComm().split(color, key, config);
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
        return state.call("split", () -> {
            state.driverComm().split(DriverConstants.SPLIT_NO_COLOR, 0, CommConfig.DEFAULT);
            return null;
        });
    }

    /**
     * {@code ncclCommShrink}: a new communicator of the ranks not in {@code excludedRanks}, e.g. after a failure.
     * Called by every remaining rank.
     */
    public CompletableFuture<Communicator> shrink(int[] excludedRanks, CommConfig config, CommOptions options) {
        Errors.requireArgument(excludedRanks, "excludedRanks");
        Errors.requireArgument(config, "config");
        int[] excluded = excludedRanks.clone();
        for (int r : excluded) {
            if (r < 0 || r >= size()) throw new InvalidArgumentException("excluded rank " + r + " is outside 0.." + (size() - 1));
            if (r == rank()) throw new InvalidArgumentException("rank " + r + " cannot exclude itself from a shrink");
        }
        backend.driver().features().require(Feature.COMM_SHRINK);
        return state.call("shrink", () -> state.driverComm().shrink(excluded, config))
                .thenCompose(child -> backend.adopt(child, id + "-s", config, options));
    }

    /**
     * {@code ncclCommSuspend}: releases the communicator's dynamic GPU memory while it is idle (NCCL 2.29+), in issue
     * order after the work already issued; use {@link #resume()} before the next operation.
     */
    public CompletableFuture<Void> suspend() {
        backend.driver().features().require(Feature.COMM_SUSPEND);
        return state.call("suspend", () -> {
            state.driverComm().suspend(DriverComm.SUSPEND_MEMORY);
            return null;
        });
    }

    /** {@code ncclCommResume}: restores what {@link #suspend()} released. */
    public CompletableFuture<Void> resume() {
        backend.driver().features().require(Feature.COMM_RESUME);
        return state.call("resume", () -> {
            state.driverComm().resume();
            return null;
        });
    }

    /** {@code ncclCommMemStats}: the GPU memory the library tracks for this communicator. */
    public CompletableFuture<CommMemoryStats> memStats() {
        backend.driver().features().require(Feature.COMM_MEM_STATS);
        return state.call("memStats", state.driverComm()::memStats);
    }

    /**
     * {@code ncclCommRevoke}: stops this communicator's in-flight operations so that it can be shrunk or destroyed.
     * Runs on its own thread, not behind the launch queue, since the launch thread may be the one that is stuck.
     */
    public CompletableFuture<Void> revoke() {
        backend.driver().features().require(Feature.COMM_REVOKE);
        return state.revoke();
    }

    /** {@code ncclCommGetUniqueId}: the id ranks outside this communicator use to join it through {@link #grow}. */
    public CompletableFuture<UniqueId> growUniqueId() {
        backend.driver().features().require(Feature.COMM_GET_UNIQUE_ID);
        return state.call("growUniqueId", () -> UniqueId.fromBytes(state.driverComm().growUniqueId()));
    }

    /**
     * {@code ncclCommGrow}, called by every current rank: a new communicator of {@code newSize} ranks that new ranks
     * join with {@link Backend#initRank} and the id from {@link #growUniqueId()}. The rank that made the id passes it.
     */
    public CompletableFuture<Communicator> grow(int newSize, @Nullable UniqueId id, CommConfig config, CommOptions options) {
        if (newSize <= size()) throw new InvalidArgumentException("grow needs more than " + size() + " ranks, not " + newSize);
        Errors.requireArgument(config, "config");
        Errors.requireArgument(options, "options");
        backend.driver().features().require(Feature.COMM_GROW);
        byte[] bytes = id == null ? null : id.toBytes();
        return state.call("grow", () -> state.driverComm().grow(newSize, bytes, config))
                .thenCompose(child -> backend.adopt(child, this.id + "+g", config, options));
    }

    /** A {@link PreMulSum} with a host scalar, for operations of {@code type} on this communicator. */
    public CompletableFuture<PreMulSum> createPreMulSum(double scalar, DataType type) {
        Errors.requireArgument(type, "type");
        state.checkOpen();
        return state.call("createPreMulSum",
                () -> new PreMulSum(state.driverComm().createPreMulSum(scalar, null, 0, type), this, type, scalar, null));
    }

    /** A {@link PreMulSum} whose scalar is one element of {@code type} at the start of {@code scalar} (device memory). */
    public CompletableFuture<PreMulSum> createPreMulSum(Buffer scalar, DataType type) {
        Errors.requireArgument(scalar, "scalar");
        Errors.requireArgument(type, "type");
        state.checkOpen();
        scalar.checkOpen();
        if (scalar.byteSize() < type.size()) throw new InvalidArgumentException("scalar buffer " + scalar + " holds no " + type);
        if (scalar.device() != device()) throw new InvalidArgumentException("scalar " + scalar + " is not on device " + device());
        return state.call("createPreMulSum", () -> new PreMulSum(
                state.driverComm().createPreMulSum(0, scalar.block(), scalar.offset(), type), this, type, 0, scalar));
    }

    void destroyReduceOp(PreMulSum op) {
        state.cleanUpInOrder(() -> state.driverComm().destroyReduceOp(op.code()));
    }

    /** {@code ncclCommRegister}: registers {@code buffer} for zero-copy use; close the registration to deregister. */
    public CompletableFuture<Registration> register(Buffer buffer) {
        Errors.requireArgument(buffer, "buffer");
        state.checkOpen();
        buffer.checkOpen();
        if (buffer.device() != device()) throw new InvalidArgumentException(buffer + " is not on device " + device());
        MemoryBlock block = buffer.block();
        block.retain(); // the registration keeps the memory alive until it is deregistered
        CompletableFuture<Long> registered;
        try {
            registered = state.call("register", () -> state.driverComm().register(block, buffer.offset(), buffer.byteSize()));
        } catch (RuntimeException e) {
            block.release();
            throw e;
        }
        return registered.handle((handle, error) -> {
            if (error != null) {
                block.release();
                throw Errors.unwrap(error);
            }
            return new Registration(this, buffer, handle);
        });
    }

    void deregister(Registration registration) {
        MemoryBlock block = registration.buffer().block();
        boolean queued = state.cleanUpInOrder(() -> {
            try {
                state.driverComm().deregister(registration.handle());
            } finally {
                block.release();
            }
        });
        if (!queued) block.release(); // the library dropped the registration with the communicator
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
            throw Errors.unwrap(e.getCause());
        } catch (TimeoutException e) {
            throw new WorkTimeoutException(describe() + " close did not finish within " + limit);
        }
    }

    /** {@link #close()} without blocking: the future completes when the communicator is destroyed. */
    public CompletableFuture<Void> closeAsync() {
        return state.closeAsync();
    }

    /**
     * {@code ncclCommAbort}: fails every pending work with {@link CommunicatorAbortedException} and frees the
     * communicator. Runs the library's abort on its own thread; the future completes when it returned, or fails
     * with a {@link org.jccl.core.error.WorkTimeoutException} after {@code jccl.abortTimeout} if it hangs. Never
     * blocks the caller. Idempotent; complete at once on a communicator that was already closed.
     */
    public CompletableFuture<Void> abort() {
        return state.abort();
    }

    /** Aborts with {@code cause} as the reason every pending and later work fails with. */
    CompletableFuture<Void> abort(JcclException cause) {
        return state.abort(cause);
    }

    /** The engine's side of this communicator. */
    CommunicatorState state() {
        return state;
    }
}
