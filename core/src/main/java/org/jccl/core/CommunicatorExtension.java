package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.CommunicatorSpi;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;

/** {@link CommunicatorSpi} over one communicator: the engine's issue path, lifecycle and event thread. */
final class CommunicatorExtension implements CommunicatorSpi {
    private final Communicator communicator;
    private final CommunicatorState state;

    CommunicatorExtension(Communicator communicator) {
        this.communicator = communicator;
        this.state = communicator.state();
    }

    @Override
    public Communicator communicator() {
        return communicator;
    }

    @Override
    public Driver driver() {
        return state.driver();
    }

    @Override
    public DriverComm driverComm() {
        return state.driverComm();
    }

    @Override
    public DriverStream stream() {
        return state.stream().driverStream();
    }

    @Override
    public MemoryRef memory(Buffer buffer) {
        Errors.requireArgument(buffer, "buffer");
        buffer.checkOpen();
        if (buffer.device() != communicator.device()) {
            throw new InvalidArgumentException(communicator.describe() + ": " + buffer + " is not on device " + communicator.device());
        }
        return Lowering.ref(buffer);
    }

    @Override
    public <T> CompletableFuture<T> call(String what, Supplier<T> task) {
        Errors.requireArgument(task, "task");
        return state.call(what, task);
    }

    @Override
    public Work issue(String what, List<Buffer> uses, Duration timeout, StreamTask task) {
        Errors.requireArgument(what, "what");
        Errors.requireArgument(task, "task");
        List<MemoryBlock> held = new ArrayList<>(uses.size());
        for (Buffer b : uses) held.add(memory(b).block());
        MemoryBlock[] blocks = held.toArray(new MemoryBlock[0]);
        long timeoutNanos = Work.nanos(timeout);
        IssuePath.Enqueue enqueue = task::enqueue;
        return (Work) IssuePath.issue(List.of(state), List.of(List.of(enqueue)), sequences -> new Work(sequences[0],
                () -> communicator.describe() + " " + describeWithSequence(what, sequences[0]), communicator, blocks,
                timeoutNanos));
    }

    @Override
    public void watch(BooleanSupplier poll) {
        Errors.requireArgument(poll, "poll");
        EventLoop.get().watch(poll::getAsBoolean);
    }

    /** {@code putSignal(count=8)} becomes {@code putSignal(seq=5, count=8)}, as the core's operations read. */
    private static String describeWithSequence(String what, long sequence) {
        int open = what.indexOf('(');
        if (open < 0) return what + "(seq=" + sequence + ")";
        boolean empty = what.startsWith(")", open + 1);
        return what.substring(0, open + 1) + "seq=" + sequence + (empty ? "" : ", ") + what.substring(open + 1);
    }
}
