package org.jccl.core;

import java.time.Duration;
import java.util.ArrayDeque;
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
import org.jccl.core.jfr.JfrEvents;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.GraphCapture;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * A step: operations of one communicator, or of several of this process, captured once into a graph (CUDA or HIP)
 * and replayed as one launch, in call order with the communicators' other operations — what a serving loop runs over
 * and over (broadcast the batch, a kernel, an all-reduce, a kernel, an all-gather). A replay is a {@link Work} like
 * any operation's.
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
 * <p>Over several communicators ({@link Builder#add(Communicator, Operation)}, {@link Builder#group(Group)}), each
 * operation runs on its communicator's stream after everything added before it: the graph forks from the first
 * communicator's stream to the others' and joins back, and a {@link Group} of several communicators (one process
 * driving several GPUs) runs its members side by side, as one group call does. A replay follows every communicator's
 * earlier operations and precedes its later ones.
 *
 * <p>Buffers are fixed at capture: every replay reads and writes the same ones, and the step keeps their memory alive
 * until it is closed and its last replay completed, and so the windows and device communicators its modules'
 * operations use ({@link org.jccl.core.module.StreamOperation#retention()}): their close waits for the step's. A
 * replay of a closed step, or of a step one of whose buffers was closed, is refused. On the host backend a step
 * re-issues its operations back to back in one work (the same order and completion); {@link Builder#buildReissued()}
 * does so on any backend, for libraries or drivers that cannot capture.
 *
 * <p>A serving loop that wants no allocation per step replays with a {@link Completion} instead of a {@link Work}
 * ({@link #replay(Completion)}): the step reuses what the engine tracks of each replay.
 */
public final class Step implements AutoCloseable {
    private final List<Communicator> communicators;
    private final List<Buffer> buffers;
    private final AutoCloseable retained;
    private final MemoryBlock[] held;
    private final @Nullable GraphCapture graphs;
    private final long graph;
    private final String description;
    /** What a replay submits: enqueued on the first communicator's launch thread, holding the step's memory. */
    private final SubmissionPart replay;
    private final long timeoutNanos;
    private final Object lock = new Object();
    private @Nullable Work lastReplay; // guarded by lock
    private @Nullable CompletableFuture<Void> closing; // guarded by lock
    /** Replays without a future: retired ones waiting to be issued again, and how many were not yet told. */
    private final ArrayDeque<StepReplay> idle = new ArrayDeque<>(); // guarded by lock
    private int untold; // guarded by lock
    /** Completed when the last replay without a future was told, once the step is closing; guarded by lock. */
    private @Nullable CompletableFuture<Void> allTold;
    private final StepReplay.Owner replays = new StepReplay.Owner() {
        @Override
        public void settled() {
            CompletableFuture<Void> drained = null;
            synchronized (lock) {
                if (--untold == 0 && allTold != null) {
                    drained = allTold;
                    allTold = null;
                }
            }
            if (drained != null) drained.complete(null);
        }

        @Override
        public void retired(StepReplay replay) {
            synchronized (lock) {
                idle.addLast(replay);
            }
        }
    };

    private Step(List<Communicator> communicators, List<Stage> stages, List<Buffer> buffers, AutoCloseable retained,
                 @Nullable GraphCapture graphs, long graph) {
        this.communicators = communicators;
        this.buffers = buffers;
        this.retained = retained;
        List<MemoryBlock> blocks = new ArrayList<>();
        long total = 0;
        int count = 0;
        for (Stage stage : stages) {
            for (List<SubmissionPart> parts : stage.parts()) {
                for (SubmissionPart p : parts) {
                    blocks.addAll(List.of(p.held()));
                    total += p.bytes();
                    count++;
                }
            }
        }
        this.held = blocks.toArray(new MemoryBlock[0]);
        for (MemoryBlock b : held) b.retain(); // released when the step is closed and its last replay completed
        this.graphs = graphs;
        this.graph = graph;
        this.description = "step(" + count + " operations" + (communicators.size() > 1 ? " over " + communicators.size()
                + " communicators" : "") + ", " + (graphs != null ? "captured" : "re-issued") + ")";
        int operations = count;
        this.timeoutNanos = Work.nanos(communicator().options().timeout());
        this.replay = new SubmissionPart(replayEnqueue(states(communicators), stages, graphs, graph),
                seq -> "step(seq=" + seq + ", " + operations + " operations)", held, total);
    }

    /**
     * One graph launch, or the stages re-issued; over several communicators between joins that order the replay after
     * every communicator's earlier work and before its later work.
     */
    private static IssuePath.Enqueue replayEnqueue(List<CommunicatorState> states, List<Stage> stages,
                                                   @Nullable GraphCapture graphs, long graph) {
        IssuePath.Enqueue body = graphs != null ? stream -> graphs.launch(graph, stream) : stream -> enqueueStages(states, stages);
        if (states.size() == 1) return body;
        CommunicatorState first = states.get(0);
        return stream -> {
            for (int i = 1; i < states.size(); i++) IssuePath.join(states.get(i), first);
            body.enqueue(stream);
            for (int i = 1; i < states.size(); i++) IssuePath.join(first, states.get(i));
        };
    }

    /** Collects the operations of a step, first of {@code communicator}. */
    public static Builder builder(Communicator communicator) {
        return new Builder(Errors.requireArgument(communicator, "communicator"));
    }

    /** The communicator the step was built for: its replays' works are tracked there. */
    public Communicator communicator() {
        return communicators.get(0);
    }

    /** Every communicator of the step, the builder's first. */
    public List<Communicator> communicators() {
        return communicators;
    }

    /** Whether a replay is one graph launch (true) or re-issues the operations (false). */
    public boolean isCaptured() {
        return graphs != null;
    }

    /**
     * Replays the step after everything issued before on its communicators; completes when every operation of it has.
     *
     * @throws InvalidUsageException for a closed step, or one whose buffers were closed
     */
    public Work replay() {
        synchronized (lock) {
            checkReplayable();
            Duration timeout = communicator().options().timeout();
            Work w = communicators.size() == 1 ? Submission.alone(communicator(), replay, "step", timeout)
                    : Submission.ordered(communicators, replay, "step", timeout);
            lastReplay = w;
            return w;
        }
    }

    /**
     * Replays the step as {@link #replay()} does, telling {@code then} when it completed instead of returning a
     * {@link Work}. A step of one communicator allocates nothing per replay (once as many replays were in flight as
     * ever will be) while nothing observes works: with a {@link WorkObserver} registered or a JFR recording taking
     * jccl's operation events, and for a step over several communicators, the replay goes through a {@code Work}.
     *
     * @throws InvalidUsageException for a closed step, or one whose buffers were closed
     */
    public void replay(Completion then) {
        Errors.requireArgument(then, "then");
        if (communicators.size() > 1 || WorkObservers.current().length > 0 || JfrEvents.operationWanted()) {
            replay().whenComplete((v, error) -> then.completed(error));
            return;
        }
        StepReplay r;
        synchronized (lock) {
            checkReplayable();
            r = idle.pollLast();
            if (r == null) r = new StepReplay(communicator(), replay, replays);
            untold++;
        }
        // Outside the lock: a refusal tells the completion on this thread. A close meanwhile waits until it was told,
        // as it waits for the last replay's Work.
        r.arm(then, timeoutNanos);
        IssuePath.issueOne(communicator().state(), r);
    }

    private void checkReplayable() {
        if (closing != null) throw new InvalidUsageException(this + " is closed");
        for (int i = 0; i < buffers.size(); i++) {
            Buffer b = buffers.get(i);
            if (b.isClosed()) throw new InvalidUsageException(this + ": its buffer " + b + " was closed");
        }
    }

    /**
     * Closes the step: later replays are refused; once the last replay completed, the graph is destroyed (in issue
     * order), the buffers' memory released and what the step kept alive besides (windows, device communicators)
     * let go. Idempotent.
     */
    public CompletableFuture<Void> closeAsync() {
        synchronized (lock) {
            if (closing != null) return closing.copy();
            CompletableFuture<Void> done = new CompletableFuture<>();
            closing = done;
            CompletableFuture<?> last = lastReplay == null ? CompletableFuture.completedFuture(null) : lastReplay;
            CompletableFuture<Void> others = new CompletableFuture<>();
            if (untold == 0) others.complete(null);
            else allTold = others;
            CompletableFuture.allOf(last.handle((v, e) -> null), others).thenRun(() -> {
                if (graphs != null) communicator().state().cleanUpInOrder(() -> graphs.destroy(graph));
                for (MemoryBlock b : held) b.release();
                Retention.release(retained);
                done.complete(null);
            });
            return done.copy();
        }
    }

    /** {@link #closeAsync()}, waiting for it; never on jccl's event thread. */
    @Override
    public void close() {
        try {
            closeAsync().get(communicator().options().closeTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
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
        return communicator().describe() + " " + description;
    }

    private static List<CommunicatorState> states(List<Communicator> communicators) {
        List<CommunicatorState> states = new ArrayList<>(communicators.size());
        for (Communicator c : communicators) states.add(c.state());
        return states;
    }

    /**
     * Operations issued together: one part, or a group over one or several communicators ({@code grouped}: between one
     * {@code ncclGroupStart}/{@code ncclGroupEnd}); {@code parts.get(i)} on {@code communicators.get(i)}, whose engine
     * side is {@code states.get(i)}.
     */
    private record Stage(List<Communicator> communicators, List<List<SubmissionPart>> parts, boolean grouped,
                         List<CommunicatorState> states) {
        Stage(List<Communicator> communicators, List<List<SubmissionPart>> parts, boolean grouped) {
            this(communicators, parts, grouped, Step.states(communicators));
        }
    }

    /**
     * Enqueues the stages in order, on the launch thread of {@code states.get(0)} with the others' claimed. Each
     * stage's streams first wait for the previous stage's other streams (the first stage's for the first
     * communicator's: the fork), and the first stream waits for the last stage's (the join): call order across streams,
     * and under capture one graph that starts and ends on the first stream. Indexed loops and no lists made: a
     * re-issued step's replay allocates nothing here.
     */
    private static void enqueueStages(List<CommunicatorState> states, List<Stage> stages) {
        CommunicatorState first = states.get(0);
        Driver driver = first.driver();
        List<CommunicatorState> previous = null; // before the first stage: the first communicator alone
        for (int s = 0; s < stages.size(); s++) {
            Stage stage = stages.get(s);
            List<CommunicatorState> current = stage.states();
            for (int i = 0; i < current.size(); i++) {
                CommunicatorState c = current.get(i);
                if (previous == null) {
                    if (c != first) IssuePath.join(first, c);
                } else {
                    for (int j = 0; j < previous.size(); j++) if (previous.get(j) != c) IssuePath.join(previous.get(j), c);
                }
            }
            if (stage.grouped()) driver.groupStart();
            try {
                for (int i = 0; i < current.size(); i++) {
                    var stream = current.get(i).stream().driverStream();
                    List<SubmissionPart> parts = stage.parts().get(i);
                    for (int k = 0; k < parts.size(); k++) parts.get(k).enqueue().enqueue(stream);
                }
            } finally {
                if (stage.grouped()) driver.groupEnd();
            }
            previous = current;
        }
        if (previous == null) return;
        for (int j = 0; j < previous.size(); j++) if (previous.get(j) != first) IssuePath.join(previous.get(j), first);
    }

    /** The operations of a step, in call order; each checked as it is added. */
    public static final class Builder {
        private final Communicator communicator;
        private final List<Communicator> communicators = new ArrayList<>();
        private final List<Stage> stages = new ArrayList<>();
        private final List<Buffer> buffers = new ArrayList<>();
        private final List<Retention> retentions = new ArrayList<>();
        private boolean hostMemory;

        private Builder(Communicator communicator) {
            this.communicator = communicator;
            communicators.add(communicator);
        }

        /** Adds a collective or point-to-point operation of the builder's communicator; throws at once if its arguments are bad. */
        public Builder add(Operation operation) {
            return add(communicator, operation);
        }

        /**
         * Adds a collective or point-to-point operation of {@code on}, another communicator of this process and backend;
         * it runs after everything added before, on any communicator.
         */
        public Builder add(Communicator on, Operation operation) {
            Errors.requireArgument(operation, "operation");
            Validation.check(member(on), operation);
            stages.add(new Stage(List.of(on), List.of(List.of(Submission.part(on, operation))), false));
            buffers.addAll(operation.buffers());
            return this;
        }

        /** Adds several operations issued in one {@code ncclGroupStart}/{@code ncclGroupEnd} (e.g. a send and a recv). */
        public Builder group(List<Operation> operations) {
            Errors.requireArgument(operations, "operations");
            if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
            List<SubmissionPart> members = new ArrayList<>();
            for (Operation op : operations) {
                Validation.check(communicator, Errors.requireArgument(op, "operation"));
                members.add(Submission.part(communicator, op));
                buffers.addAll(op.buffers());
            }
            stages.add(new Stage(List.of(communicator), List.of(members), true));
            return this;
        }

        /**
         * Adds a group, of one communicator or several of this process (one process driving several GPUs: each GPU's
         * share of a collective must be issued in one group). Its members run side by side, after everything added
         * before; what is added later runs after all of them.
         */
        public Builder group(Group group) {
            Errors.requireArgument(group, "group");
            List<Communicator> members = group.communicators();
            if (members.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
            for (Communicator c : members) member(c);
            stages.add(new Stage(members, group.parts(), true));
            buffers.addAll(group.buffers);
            retentions.addAll(group.retentions);
            hostMemory |= group.usesHostMemory;
            return this;
        }

        /** Adds a module's operation (a kernel launch, a put); its buffers are checked open and on the device here. */
        public Builder add(StreamOperation operation) {
            return add(communicator, operation);
        }

        /** Adds a module's operation of {@code on}, another communicator of this process and backend. */
        public Builder add(Communicator on, StreamOperation operation) {
            Errors.requireArgument(operation, "operation");
            member(on);
            stages.add(new Stage(List.of(on), List.of(List.of(Submission.modulePart(on, operation::describe,
                    operation.uses(), operation.task()::enqueue))), false));
            retentions.add(operation.retention());
            for (Buffer b : operation.uses()) {
                buffers.add(b);
                hostMemory |= b.kind() == MemoryKind.PINNED_HOST;
            }
            return this;
        }

        /** {@code c}, open and of the builder's backend, now one of the step's communicators. */
        private Communicator member(Communicator c) {
            Errors.requireArgument(c, "communicator");
            c.state().checkOpen();
            if (c.backend() != communicator.backend()) {
                throw new InvalidArgumentException("a step's communicators must share one backend: " + c.describe()
                        + " is not of " + communicator.backend().kind());
            }
            if (!communicators.contains(c)) communicators.add(c);
            return c;
        }

        /**
         * Captures the operations into a graph on the (first) communicator's launch thread, in issue order; on the
         * host backend, a step that re-issues them. The communicators stay usable whatever happens.
         *
         * @throws org.jccl.core.error.UnsupportedFeatureException (at once) where the driver cannot capture: use
         *                                                        {@link #buildReissued()}
         * @throws InvalidUsageException                          for an operation that cannot be captured (one using host
         *                                                        memory)
         */
        public CompletableFuture<Step> build() {
            if (stages.isEmpty()) throw new InvalidArgumentException("a step needs at least one operation");
            Driver driver = communicator.backend().driver();
            if (!driver.hasDevices()) return buildReissued();
            GraphCapture graphs = driver.graphs();
            if (hostMemory) {
                throw new InvalidUsageException("a step cannot capture an operation on pinned host memory (a host copy):"
                        + " the graph would read the memory at capture's address on every replay, with no order against"
                        + " the host's writes; use buildReissued()");
            }
            List<Communicator> comms = List.copyOf(communicators);
            List<Stage> captured = List.copyOf(stages);
            List<Buffer> used = List.copyOf(buffers);
            List<CommunicatorState> states = states(comms);
            AutoCloseable retained = Retention.all(retentions).retain(); // throws for a window or device communicator closed since
            long[] graph = new long[1];
            SubmissionPart capture = new SubmissionPart(stream -> {
                graphs.begin(stream);
                try {
                    enqueueStages(states, captured);
                } catch (RuntimeException e) {
                    try {
                        graphs.destroy(graphs.end(stream)); // ends the capture, so the streams run work again
                    } catch (RuntimeException ended) {
                        e.addSuppressed(ended);
                    }
                    throw notCapturable(e);
                }
                graph[0] = graphs.end(stream);
            }, seq -> "captureStep(seq=" + seq + ")", new MemoryBlock[0], 0);
            // The graph is made by the time the capture's work completes: its event was recorded after the capture ended.
            return Submission.ordered(comms, capture, "captureStep", communicator.options().timeout())
                    .handle((w, error) -> {
                        if (error == null) return new Step(comms, captured, used, retained, graphs, graph[0]);
                        Retention.release(retained);
                        throw Errors.unwrap(error);
                    });
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
            if (stages.isEmpty()) throw new InvalidArgumentException("a step needs at least one operation");
            for (Communicator c : communicators) c.state().checkOpen();
            AutoCloseable retained = Retention.all(retentions).retain();
            return CompletableFuture.completedFuture(new Step(List.copyOf(communicators), List.copyOf(stages),
                    List.copyOf(buffers), retained, null, 0));
        }
    }
}
