package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;

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
        Communicator first = operations.isEmpty() ? null : operations.keySet().iterator().next();
        if (first != null && first.backend() != communicator.backend()) {
            throw new InvalidArgumentException("a group's communicators must share one backend");
        }
        operations.computeIfAbsent(communicator, c -> new ArrayList<>()).add(operation);
        return this;
    }

    /** Issues the group; each communicator's part follows the work it already issued. */
    public Work submit() {
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        Communicator first = operations.keySet().iterator().next();
        return issue(new ArrayList<>(operations.keySet()), new ArrayList<>(operations.values()), first.options().timeout());
    }

    /**
     * {@code ncclGroupSimulateEnd}: what the library estimates the group would take, in microseconds, without
     * launching it. Runs in issue order on the first communicator's launch thread.
     */
    public CompletableFuture<Float> simulate() {
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
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
        return (Work) IssuePath.issue(states, parts,
                sequences -> new Work(sequences[0], () -> describe(comms, ops, sequences), comms.get(0), held, timeoutNanos));
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
