package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;

/**
 * The one way an operation enters the engine: core's operations (from {@link Communicator} and {@link Group}) and
 * modules' stream operations (from {@link Group} and {@link Modules}' contexts) alike. Callers have checked their
 * arguments (features included); here each part is lowered for the driver, its memory listed, and the work made and
 * handed to {@link IssuePath}, which admits it and queues its launch. A single operation is a submission of one part,
 * issued without {@code ncclGroupStart}/{@code End}.
 */
final class Submission {
    private Submission() {
    }

    /** A core operation, validated, lowered now and launched through the driver. */
    static SubmissionPart part(Communicator communicator, Operation op) {
        return new SubmissionPart(launch(communicator.state(), op), op::describe, Lowering.heldMemory(op), bytes(op));
    }

    /**
     * A module's operation: {@code uses} checked open and on the communicator's device, {@code task} enqueued as is,
     * {@code describe} naming it with its sequence number.
     */
    static SubmissionPart modulePart(Communicator communicator, LongFunction<String> describe, List<Buffer> uses, IssuePath.Enqueue task) {
        MemoryBlock[] blocks = new MemoryBlock[uses.size()];
        for (int i = 0; i < blocks.length; i++) blocks[i] = memory(communicator, uses.get(i)).block();
        return new SubmissionPart(task, describe, blocks, 0);
    }

    /**
     * The memory of {@code buffer} for an operation of {@code communicator}: open, and on its device or pinned host
     * memory (which copies on any device's stream may use).
     */
    static MemoryRef memory(Communicator communicator, Buffer buffer) {
        Errors.requireArgument(buffer, "buffer");
        buffer.checkOpen();
        if (buffer.device() != communicator.device() && buffer.kind() != MemoryKind.PINNED_HOST) {
            throw new InvalidArgumentException(communicator.describe() + ": " + buffer + " is not on device " + communicator.device());
        }
        return buffer.ref();
    }

    /**
     * One validated operation issued under another name: {@code name(seq=N)} in messages, {@code name} for observers
     * (a barrier's all-reduce of one byte is a barrier to the people reading about it).
     */
    static Work named(Communicator communicator, Operation op, String name, Duration timeout) {
        SubmissionPart part = new SubmissionPart(launch(communicator.state(), op), sequence -> name + "(seq=" + sequence + ")",
                Lowering.heldMemory(op), 0);
        return alone(communicator, part, name, timeout);
    }

    /** One validated operation of one communicator: the hot path, allocating only its work and lowered form. */
    static Work one(Communicator communicator, Operation op, Duration timeout) {
        Work w = new Work(communicator, op, Lowering.lower(op), Lowering.heldMemory(op), bytes(op), Work.nanos(timeout));
        return IssuePath.issueOne(communicator.state(), w);
    }

    /**
     * One part alone on {@code communicator}, outside any group: a module's operation, a step's replay. Allocates only
     * the work.
     *
     * @param name what observers see as the work's name
     */
    static Work alone(Communicator communicator, SubmissionPart part, String name, Duration timeout) {
        return IssuePath.issueOne(communicator.state(), new Work(communicator, part, name, Work.nanos(timeout)));
    }

    /**
     * {@code parts.get(i)} on {@code communicators.get(i)}, in one group when there is more than one part; one work
     * completes when all have.
     *
     * @param name what observers see as the work's name when it is not a group
     */
    static Work submit(List<Communicator> communicators, List<List<SubmissionPart>> parts, String name, Duration timeout) {
        return submit(communicators, parts, name, timeout, communicators.size() > 1 || parts.get(0).size() > 1);
    }

    /**
     * One part enqueued on the first communicator's launch thread while the others' launch threads are claimed, outside
     * any group: the part orders the communicators' streams itself (a step over several communicators).
     */
    static Work ordered(List<Communicator> communicators, SubmissionPart part, String name, Duration timeout) {
        List<List<SubmissionPart>> parts = new ArrayList<>(communicators.size());
        for (int i = 0; i < communicators.size(); i++) parts.add(i == 0 ? List.of(part) : List.of());
        return submit(communicators, parts, name, timeout, false);
    }

    private static Work submit(List<Communicator> communicators, List<List<SubmissionPart>> parts, String name, Duration timeout,
                               boolean grouped) {
        List<CommunicatorState> states = new ArrayList<>(communicators.size());
        List<List<IssuePath.Enqueue>> launches = new ArrayList<>(communicators.size());
        List<MemoryBlock> held = new ArrayList<>();
        long bytes = 0;
        int count = 0;
        for (int i = 0; i < communicators.size(); i++) {
            states.add(communicators.get(i).state());
            List<IssuePath.Enqueue> launch = new ArrayList<>(parts.get(i).size());
            for (SubmissionPart p : parts.get(i)) {
                launch.add(p.enqueue());
                held.addAll(List.of(p.held()));
                bytes += p.bytes();
                count++;
            }
            launches.add(launch);
        }
        MemoryBlock[] blocks = held.toArray(new MemoryBlock[0]);
        long timeoutNanos = Work.nanos(timeout);
        long total = bytes;
        String workName = count == 1 ? name : "group";
        Communicator first = communicators.get(0);
        return IssuePath.issue(states, launches, grouped, sequences -> new Work(sequences[0],
                () -> describe(communicators, parts, sequences), first, workName, total, blocks, timeoutNanos));
    }

    /** The launch of one validated operation: lowered now, enqueued by the launch thread. */
    private static IssuePath.Enqueue launch(CommunicatorState state, Operation op) {
        Driver driver = state.driver();
        DriverComm dc = state.driverComm();
        LaunchOp lowered = Lowering.lower(op);
        return stream -> driver.launch(dc, lowered, stream);
    }

    /** What {@link Work#bytes()} reports: the count argument times the element size (allToAllv: the send counts). */
    private static long bytes(Operation op) {
        long[][] counts = op.kind() == OpKind.ALL_TO_ALL_V ? op.counts() : null;
        long elements = op.count();
        if (counts != null && counts[0] != null) {
            elements = 0;
            for (long c : counts[0]) elements += c;
        }
        return elements * op.type().size();
    }

    /**
     * e.g. {@code [comm=3f2a rank=0/2] allReduce(seq=17, ...)} or {@code ... group(send(seq=3, ...), recv(seq=4, ...))};
     * parts of communicators after the first are prefixed with theirs.
     */
    private static String describe(List<Communicator> communicators, List<List<SubmissionPart>> parts, long[] sequences) {
        StringBuilder sb = new StringBuilder(communicators.get(0).describe()).append(' ');
        boolean group = sequences.length > 1;
        if (group) sb.append("group(");
        int k = 0;
        for (int i = 0; i < communicators.size(); i++) {
            for (SubmissionPart p : parts.get(i)) {
                if (k > 0) sb.append(", ");
                if (i > 0) sb.append(communicators.get(i).describe()).append(' ');
                sb.append(p.describe(sequences[k++]));
            }
        }
        return group ? sb.append(')').toString() : sb.toString();
    }
}
