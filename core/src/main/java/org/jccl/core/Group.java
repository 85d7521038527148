package org.jccl.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryKind;

/**
 * A group call: several operations, on one or several communicators, issued between one {@code ncclGroupStart}
 * and {@code ncclGroupEnd} on one thread; one {@link Work} completes when all have. Sends and receives in one
 * group never deadlock, whatever their order. Operations are validated as they are added.
 *
 * <pre>{@code
 * Work w = Group.create()
 *     .add(comm, Operation.send(buf, n, DataType.FLOAT32, peer))
 *     .add(comm, Operation.recv(other, n, DataType.FLOAT32, peer))
 *     .submit();
 * }</pre>
 */
public final class Group {
    /** Each communicator's parts, in the order they were added. */
    private final Map<Communicator, List<SubmissionPart>> parts = new LinkedHashMap<>();
    /** Core's operations alone, for {@link #simulate()}. */
    private final Map<Communicator, List<Operation>> operations = new LinkedHashMap<>();
    private boolean hasModuleOperations;
    /** Every buffer the operations use, for a step that holds the group ({@link Step.Builder#group(Group)}). */
    final List<Buffer> buffers = new ArrayList<>();
    /** Whether an operation uses pinned host memory, which a step cannot capture. */
    boolean usesHostMemory;
    /** What a step holding the group must keep alive for its modules' operations. */
    final List<Retention> retentions = new ArrayList<>();

    private Group() {
    }

    public static Group create() {
        return new Group();
    }

    /** Adds an operation of {@code communicator}; throws at once if its arguments are bad. */
    public Group add(Communicator communicator, Operation operation) {
        Errors.requireArgument(communicator, "communicator");
        Errors.requireArgument(operation, "operation");
        Validation.check(communicator, operation);
        checkBackend(communicator);
        parts.computeIfAbsent(communicator, c -> new ArrayList<>()).add(Submission.part(communicator, operation));
        operations.computeIfAbsent(communicator, c -> new ArrayList<>()).add(operation);
        buffers.addAll(operation.buffers());
        return this;
    }

    /**
     * Adds an operation of a module built on core (a window's put, a signal, a kernel launch) of
     * {@code communicator}; the module checked its arguments, and its buffers are checked open and on the
     * communicator's device here. Library calls it makes (a put, a wait) join the group in the order added; stream
     * work it enqueues itself (a copy) runs when enqueued, before the group's library operations, as CUDA work does
     * inside {@code ncclGroupStart}/{@code ncclGroupEnd}.
     */
    public Group add(Communicator communicator, StreamOperation operation) {
        Errors.requireArgument(communicator, "communicator");
        Errors.requireArgument(operation, "operation");
        communicator.state().checkOpen();
        checkBackend(communicator);
        parts.computeIfAbsent(communicator, c -> new ArrayList<>())
                .add(Submission.modulePart(communicator, operation::describe, operation.uses(), operation.task()::enqueue));
        hasModuleOperations = true;
        retentions.add(operation.retention());
        for (Buffer b : operation.uses()) {
            buffers.add(b);
            usesHostMemory |= b.kind() == MemoryKind.PINNED_HOST;
        }
        return this;
    }

    private void checkBackend(Communicator communicator) {
        Communicator first = parts.isEmpty() ? null : parts.keySet().iterator().next();
        if (first != null && first.backend() != communicator.backend()) {
            throw new InvalidArgumentException("a group's communicators must share one backend");
        }
    }

    /** The communicators, in the order their first operation was added, for a step that holds the group. */
    List<Communicator> communicators() {
        return new ArrayList<>(parts.keySet());
    }

    /** Each communicator's parts, in {@link #communicators()}' order. */
    List<List<SubmissionPart>> parts() {
        return new ArrayList<>(parts.values());
    }

    /** Issues the group; each communicator's part follows the work it already issued. */
    public Work submit() {
        if (parts.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        Communicator first = parts.keySet().iterator().next();
        List<Operation> firstOps = operations.getOrDefault(first, List.of());
        String single = parts.size() == 1 && !hasModuleOperations && firstOps.size() == 1 ? firstOps.get(0).kind().method() : "group";
        return Submission.submit(new ArrayList<>(parts.keySet()), new ArrayList<>(parts.values()), single,
                first.options().timeout());
    }

    /**
     * {@code ncclGroupSimulateEnd}: what the library estimates the group would take, in microseconds, without
     * launching it. Runs in issue order on the first communicator's launch thread.
     */
    public CompletableFuture<Float> simulate() {
        if (parts.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        if (hasModuleOperations) {
            throw new InvalidUsageException("ncclGroupSimulateEnd estimates collectives and send/recv only, not a module's operations");
        }
        List<Communicator> comms = new ArrayList<>(operations.keySet());
        List<List<Operation>> ops = new ArrayList<>(operations.values());
        Communicator first = comms.get(0);
        first.backend().driver().features().require(Feature.GROUP_SIMULATE_END);
        return first.state().call("groupSimulateEnd", () -> {
            Driver driver = first.backend().driver();
            driver.groupStart();
            for (int i = 0; i < comms.size(); i++) {
                CommunicatorState c = comms.get(i).state();
                for (Operation op : ops.get(i)) driver.launch(c.driverComm(), Lowering.lower(op), c.stream().driverStream());
            }
            return driver.groupSimulateEnd();
        });
    }
}
