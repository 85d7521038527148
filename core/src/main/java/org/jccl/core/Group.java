package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.StreamOperation;

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
    private final Map<Communicator, List<Operation>> operations = new LinkedHashMap<>();
    /** Operations of modules built on core, per communicator, in the order they were added among its operations. */
    private final Map<Communicator, List<Extension>> extensions = new LinkedHashMap<>();
    private int added;

    /** A module's operation and its place among the group's operations of its communicator. */
    private record Extension(int position, StreamOperation operation) {
    }

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
        operations.computeIfAbsent(communicator, c -> new ArrayList<>()).add(operation);
        added++;
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
        for (Buffer b : operation.uses()) communicator.spi().memory(b);
        checkBackend(communicator);
        operations.computeIfAbsent(communicator, c -> new ArrayList<>());
        int position = operations.get(communicator).size() + extensions.getOrDefault(communicator, List.of()).size();
        extensions.computeIfAbsent(communicator, c -> new ArrayList<>()).add(new Extension(position, operation));
        added++;
        return this;
    }

    private void checkBackend(Communicator communicator) {
        Communicator first = operations.isEmpty() ? null : operations.keySet().iterator().next();
        if (first != null && first.backend() != communicator.backend()) {
            throw new InvalidArgumentException("a group's communicators must share one backend");
        }
    }

    /** Issues the group; each communicator's part follows the work it already issued. */
    public Work submit() {
        if (added == 0) throw new InvalidArgumentException("a group needs at least one operation");
        Communicator first = operations.keySet().iterator().next();
        if (!extensions.isEmpty()) return issueMixed(first.options().timeout());
        return issue(new ArrayList<>(operations.keySet()), new ArrayList<>(operations.values()), first.options().timeout());
    }

    /**
     * {@code ncclGroupSimulateEnd}: what the library estimates the group would take, in microseconds, without
     * launching it. Runs in issue order on the first communicator's launch thread.
     */
    public CompletableFuture<Float> simulate() {
        if (added == 0) throw new InvalidArgumentException("a group needs at least one operation");
        if (!extensions.isEmpty()) {
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

    /**
     * The one issue path of the API: validated operations of each communicator, lowered for the driver, admitted
     * and launched by the engine ({@link IssuePath}). A single operation is a group of one.
     */
    static Work issue(List<Communicator> comms, List<List<Operation>> ops, Duration timeout) {
        List<CommunicatorState> states;
        List<List<IssuePath.Enqueue>> parts;
        if (comms.size() == 1 && ops.get(0).size() == 1) { // the common case, without the lists below
            CommunicatorState state = comms.get(0).state();
            states = List.of(state);
            parts = List.of(List.of(enqueue(state, ops.get(0).get(0))));
        } else {
            states = new ArrayList<>(comms.size());
            parts = new ArrayList<>(comms.size());
            for (int i = 0; i < comms.size(); i++) {
                CommunicatorState state = comms.get(i).state();
                List<IssuePath.Enqueue> part = new ArrayList<>(ops.get(i).size());
                for (Operation op : ops.get(i)) part.add(enqueue(state, op));
                states.add(state);
                parts.add(part);
            }
        }
        MemoryBlock[] held = Lowering.heldMemory(ops);
        long timeoutNanos = Work.nanos(timeout);
        long bytes = bytes(ops); // here, not in the factory, which runs under the submit lock
        String name = comms.size() == 1 && ops.get(0).size() == 1 ? ops.get(0).get(0).kind().method() : "group";
        return (Work) IssuePath.issue(states, parts,
                sequences -> new Work(sequences[0], () -> describe(comms, ops, sequences), comms.get(0), name, bytes, held,
                        timeoutNanos));
    }

    /** A group with modules' operations: each communicator's part keeps the order in which they were added. */
    private Work issueMixed(Duration timeout) {
        List<Communicator> comms = new ArrayList<>(operations.keySet());
        List<CommunicatorState> states = new ArrayList<>(comms.size());
        List<List<IssuePath.Enqueue>> parts = new ArrayList<>(comms.size());
        List<LongFunction<String>> names = new ArrayList<>();
        List<List<Operation>> perCommunicator = new ArrayList<>(operations.values());
        List<MemoryBlock> held = new ArrayList<>(List.of(Lowering.heldMemory(perCommunicator)));
        for (Communicator c : comms) {
            CommunicatorState state = c.state();
            List<Operation> ops = operations.get(c);
            List<Extension> ext = extensions.getOrDefault(c, List.of());
            List<IssuePath.Enqueue> part = new ArrayList<>(ops.size() + ext.size());
            String prefix = c == comms.get(0) ? "" : c.describe() + " ";
            int o = 0;
            int e = 0;
            while (o < ops.size() || e < ext.size()) {
                boolean extensionNext = e < ext.size() && ext.get(e).position() == part.size();
                if (extensionNext) {
                    StreamOperation op = ext.get(e++).operation();
                    part.add(op.task()::enqueue);
                    held.addAll(List.of(((CommunicatorExtension) c.spi()).heldMemory(op)));
                    names.add(seq -> prefix + op.describe(seq));
                } else {
                    Operation op = ops.get(o++);
                    part.add(enqueue(state, op));
                    names.add(seq -> prefix + op.describe(seq));
                }
            }
            states.add(state);
            parts.add(part);
        }
        MemoryBlock[] blocks = held.toArray(new MemoryBlock[0]);
        long timeoutNanos = Work.nanos(timeout);
        long bytes = bytes(perCommunicator);
        return (Work) IssuePath.issue(states, parts, sequences -> new Work(sequences[0],
                () -> describeMixed(comms.get(0), names, sequences), comms.get(0), "group", bytes, blocks, timeoutNanos));
    }

    /** What {@link Work#bytes()} reports: each operation's count argument times its element size. */
    private static long bytes(List<List<Operation>> ops) {
        long total = 0;
        for (int i = 0; i < ops.size(); i++) { // indexed: no iterator on the issue path
            for (int j = 0; j < ops.get(i).size(); j++) {
                Operation op = ops.get(i).get(j);
                long[][] counts = op.kind() == OpKind.ALL_TO_ALL_V ? op.counts() : null;
                long elements = op.count();
                if (counts != null && counts[0] != null) {
                    elements = 0;
                    for (long c : counts[0]) elements += c;
                }
                total += elements * op.type().size();
            }
        }
        return total;
    }

    /** As {@link #describe}: operations after the first communicator's are prefixed with their communicator. */
    private static String describeMixed(Communicator first, List<LongFunction<String>> names, long[] sequences) {
        StringBuilder sb = new StringBuilder(first.describe()).append(" group(");
        for (int k = 0; k < names.size(); k++) {
            if (k > 0) sb.append(", ");
            sb.append(names.get(k).apply(sequences[k]));
        }
        return sb.append(')').toString();
    }

    /** The launch of one validated operation: lowered now, enqueued by the launch thread. */
    private static IssuePath.Enqueue enqueue(CommunicatorState state, Operation op) {
        Driver driver = state.driver();
        DriverComm dc = state.driverComm();
        LaunchOp lowered = Lowering.lower(op);
        return stream -> driver.launch(dc, lowered, stream);
    }

    /** e.g. {@code [comm=3f2a rank=0/2] allReduce(seq=17, ...)} or {@code ... group(send(seq=3, ...), recv(seq=4, ...))}. */
    private static String describe(List<Communicator> comms, List<List<Operation>> ops, long[] sequences) {
        StringBuilder sb = new StringBuilder(comms.get(0).describe()).append(' ');
        boolean group = sequences.length > 1;
        if (group) sb.append("group(");
        int k = 0;
        for (int i = 0; i < comms.size(); i++) {
            for (Operation op : ops.get(i)) {
                if (k > 0) sb.append(", ");
                if (i > 0) sb.append(comms.get(i).describe()).append(' ');
                sb.append(op.describe(sequences[k++]));
            }
        }
        return group ? sb.append(')').toString() : sb.toString();
    }
}
