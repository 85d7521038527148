package org.jccl.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.GraphCapture;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * A step: operations of one communicator captured once into a graph (CUDA or HIP) and replayed as one launch, in call
 * order with the communicator's other operations — what a serving loop runs over and over (broadcast the batch, a
 * kernel, an all-reduce, a kernel, an all-gather). A replay is a {@link Work} like any operation's.
 *
 * <pre>{@code
 * Step step = Step.builder(comm)
 *     .add(Operation.broadcast(batch, batch, n, DataType.FLOAT32, 0))
 *     .add(mlp.layer1())                                   // a module's operation, e.g. a kernel launch
 *     .add(Operation.allReduce(hidden, hidden, m, DataType.FLOAT32, ReduceOp.SUM))
 *     .build().join();                                      // captured on the launch thread
 * for (...) step.replay().join();                          // one graph launch each
 * }</pre>
 *
 * <p>Buffers are fixed at capture: every replay reads and writes the same ones, and the step keeps their memory alive
 * until it is closed and its last replay completed. A replay of a closed step, or of a step one of whose buffers was
 * closed, is refused. On the host backend a step re-issues its operations back to back in one work (the same order and
 * completion); {@link Builder#buildReissued()} does so on any backend, for libraries or drivers that cannot capture.
 */
public final class Step implements AutoCloseable {
    private final Communicator communicator;
    private final List<Submission.Part> parts;
    private final List<Buffer> buffers;
    private final MemoryBlock[] held;
    private final long bytes;
    private final @Nullable GraphCapture graphs;
    private final long graph;
    private final String description;
    private final Object lock = new Object();
    private @Nullable Work lastReplay; // guarded by lock
    private @Nullable CompletableFuture<Void> closing; // guarded by lock

    private Step(Communicator communicator, List<Submission.Part> parts, List<Buffer> buffers, @Nullable GraphCapture graphs,
                 long graph) {
        this.communicator = communicator;
        this.parts = parts;
        this.buffers = buffers;
        List<MemoryBlock> blocks = new ArrayList<>();
        long total = 0;
        for (Submission.Part p : parts) {
            blocks.addAll(List.of(p.held()));
            total += p.bytes();
        }
        this.held = blocks.toArray(new MemoryBlock[0]);
        for (MemoryBlock b : held) b.retain(); // released when the step is closed and its last replay completed
        this.bytes = total;
        this.graphs = graphs;
        this.graph = graph;
        this.description = "step(" + parts.size() + " operations, " + (graphs != null ? "captured" : "re-issued") + ")";
    }

    /** Collects the operations of a step of {@code communicator}. */
    public static Builder builder(Communicator communicator) {
        return new Builder(Errors.requireArgument(communicator, "communicator"));
    }

    public Communicator communicator() {
        return communicator;
    }

    /** Whether a replay is one graph launch (true) or re-issues the operations (false). */
    public boolean isCaptured() {
        return graphs != null;
    }

    /**
     * Replays the step after everything issued before on the communicator; completes when every operation of it has.
     *
     * @throws InvalidUsageException for a closed step, or one whose buffers were closed
     */
    public Work replay() {
        synchronized (lock) {
            if (closing != null) throw new InvalidUsageException(this + " is closed");
            for (Buffer b : buffers) {
                if (b.isClosed()) throw new InvalidUsageException(this + ": its buffer " + b + " was closed");
            }
            IssuePath.Enqueue enqueue;
            if (graphs != null) {
                GraphCapture g = graphs;
                enqueue = stream -> g.launch(graph, stream);
            } else {
                List<Submission.Part> all = parts;
                enqueue = stream -> {
                    for (int i = 0; i < all.size(); i++) all.get(i).enqueue().enqueue(stream);
                };
            }
            Submission.Part whole = new Submission.Part(enqueue, seq -> "step(seq=" + seq + ", " + parts.size()
                    + " operations)", held, bytes);
            Work w = Submission.submit(List.of(communicator), List.of(List.of(whole)), "step", communicator.options().timeout());
            lastReplay = w;
            return w;
        }
    }

    /**
     * Closes the step: later replays are refused; once the last replay completed, the graph is destroyed (in issue
     * order) and the buffers' memory released. Idempotent.
     */
    public CompletableFuture<Void> closeAsync() {
        synchronized (lock) {
            if (closing != null) return closing.copy();
            CompletableFuture<Void> done = new CompletableFuture<>();
            closing = done;
            CompletableFuture<?> drained = lastReplay == null ? CompletableFuture.completedFuture(null) : lastReplay;
            drained.handle((v, e) -> null).thenRun(() -> {
                if (graphs != null) communicator.state().cleanUpInOrder(() -> graphs.destroy(graph));
                for (MemoryBlock b : held) b.release();
                done.complete(null);
            });
            return done.copy();
        }
    }

    /** {@link #closeAsync()}, waiting for it; never on jccl's event thread. */
    @Override
    public void close() {
        try {
            closeAsync().get(communicator.options().closeTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw Errors.unwrap(e.getCause());
        } catch (TimeoutException e) {
            throw new WorkTimeoutException(this + ": its last replay did not complete");
        }
    }

    @Override
    public String toString() {
        return communicator.describe() + " " + description;
    }

    /** The operations of a step, in call order; each checked as it is added. */
    public static final class Builder {
        private final Communicator communicator;
        private final List<Submission.Part> parts = new ArrayList<>();
        private final List<Buffer> buffers = new ArrayList<>();
        private boolean hostMemory;

        private Builder(Communicator communicator) {
            this.communicator = communicator;
        }

        /** Adds a collective or point-to-point operation; throws at once if its arguments are bad. */
        public Builder add(Operation operation) {
            Errors.requireArgument(operation, "operation");
            Validation.check(communicator, operation);
            parts.add(Submission.part(communicator, operation));
            for (Buffer b : new Buffer[] {operation.send(), operation.recv(), operation.bias()}) if (b != null) buffers.add(b);
            return this;
        }

        /** Adds several operations issued in one {@code ncclGroupStart}/{@code ncclGroupEnd} (e.g. a send and a recv). */
        public Builder group(List<Operation> operations) {
            Errors.requireArgument(operations, "operations");
            if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
            List<Submission.Part> members = new ArrayList<>();
            for (Operation op : operations) {
                Validation.check(communicator, Errors.requireArgument(op, "operation"));
                members.add(Submission.part(communicator, op));
                for (Buffer b : new Buffer[] {op.send(), op.recv(), op.bias()}) if (b != null) buffers.add(b);
            }
            Driver driver = communicator.backend().driver();
            List<MemoryBlock> blocks = new ArrayList<>();
            long total = 0;
            for (Submission.Part p : members) {
                blocks.addAll(List.of(p.held()));
                total += p.bytes();
            }
            parts.add(new Submission.Part(stream -> {
                driver.groupStart();
                try {
                    for (Submission.Part p : members) p.enqueue().enqueue(stream);
                } finally {
                    driver.groupEnd();
                }
            }, seq -> "group(" + members.size() + ")", blocks.toArray(new MemoryBlock[0]), total));
            return this;
        }

        /** Adds a module's operation (a kernel launch, a put); its buffers are checked open and on the device here. */
        public Builder add(StreamOperation operation) {
            Errors.requireArgument(operation, "operation");
            parts.add(Submission.modulePart(communicator, operation::describe, operation.uses(), operation.task()::enqueue));
            for (Buffer b : operation.uses()) {
                buffers.add(b);
                hostMemory |= b.kind() == MemoryKind.PINNED_HOST;
            }
            return this;
        }

        /**
         * Captures the operations into a graph on the communicator's launch thread, in issue order; on the host backend,
         * a step that re-issues them. The communicator stays usable whatever happens.
         *
         * @throws org.jccl.core.error.UnsupportedFeatureException (at once) where the driver cannot capture: use
         *                                                        {@link #buildReissued()}
         * @throws InvalidUsageException                          for an operation that cannot be captured (one using host
         *                                                        memory)
         */
        public CompletableFuture<Step> build() {
            if (parts.isEmpty()) throw new InvalidArgumentException("a step needs at least one operation");
            Driver driver = communicator.backend().driver();
            if (!driver.hasDevices()) return buildReissued();
            GraphCapture graphs = driver.graphs();
            if (hostMemory) {
                throw new InvalidUsageException("a step cannot capture an operation on pinned host memory (a host copy):"
                        + " the graph would read the memory at capture's address on every replay, with no order against"
                        + " the host's writes; use buildReissued()");
            }
            List<Submission.Part> captured = List.copyOf(parts);
            List<Buffer> used = List.copyOf(buffers);
            CommunicatorState state = communicator.state();
            return state.call("captureStep", () -> {
                var stream = state.stream().driverStream();
                graphs.begin(stream);
                try {
                    for (Submission.Part p : captured) p.enqueue().enqueue(stream);
                } catch (RuntimeException e) {
                    try {
                        graphs.destroy(graphs.end(stream)); // ends the capture, so the stream runs work again
                    } catch (RuntimeException ended) {
                        e.addSuppressed(ended);
                    }
                    throw notCapturable(e);
                }
                return graphs.end(stream);
            }).thenApply(graph -> new Step(communicator, captured, used, graphs, graph));
        }

        /**
         * What a library call that refused to be captured means. NCCL connects to peers lazily, on a collective's first
         * run with a given algorithm and protocol ({@code NCCL_RUNTIME_CONNECT}, on by default since 2.22), and that set-up
         * cannot be captured: measured on 2 × H200, NCCL 2.28.9, a first all-reduce under capture fails "failed to peer
         * with device 0: operation not permitted when stream is capturing".
         */
        private RuntimeException notCapturable(RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            if (!m.contains("capturing")) return e;
            return new InvalidUsageException(communicator.describe() + ": the library refused to be captured (" + m + "): run"
                    + " the step's operations once eagerly, with the same sizes, before building it (NCCL connects to"
                    + " peers on a collective's first run), or set NCCL_RUNTIME_CONNECT=0", -1, null, null, null, e);
        }

        /** A step that re-issues its operations back to back in one work on every replay, on any backend. */
        public CompletableFuture<Step> buildReissued() {
            if (parts.isEmpty()) throw new InvalidArgumentException("a step needs at least one operation");
            communicator.state().checkOpen();
            return CompletableFuture.completedFuture(new Step(communicator, List.copyOf(parts), List.copyOf(buffers), null, 0));
        }
    }
}
