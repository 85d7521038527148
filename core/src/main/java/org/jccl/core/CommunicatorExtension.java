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
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.StreamOperation;

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
        // Pinned host memory serves copies on any device's stream.
        if (buffer.device() != communicator.device() && buffer.kind() != MemoryKind.PINNED_HOST) {
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
        Errors.requireArgument(uses, "uses");
        Errors.requireArgument(task, "task");
        StreamOperation op = new StreamOperation(what, uses, task);
        MemoryBlock[] blocks = heldMemory(op);
        long timeoutNanos = Work.nanos(timeout);
        IssuePath.Enqueue enqueue = task::enqueue;
        int arguments = what.indexOf('(');
        String name = arguments < 0 ? what : what.substring(0, arguments); // metrics tag the name, not the arguments
        return (Work) IssuePath.issue(List.of(state), List.of(List.of(enqueue)), sequences -> new Work(sequences[0],
                () -> communicator.describe() + " " + op.describe(sequences[0]), communicator, name, 0, blocks, timeoutNanos));
    }

    /** The memory {@code op} uses, each buffer checked open and on this communicator's device. */
    MemoryBlock[] heldMemory(StreamOperation op) {
        List<MemoryBlock> held = new ArrayList<>(op.uses().size());
        for (Buffer b : op.uses()) held.add(memory(b).block());
        return held.toArray(new MemoryBlock[0]);
    }

    @Override
    public void watch(BooleanSupplier poll) {
        Errors.requireArgument(poll, "poll");
        EventLoop.get().watch(poll::getAsBoolean);
    }
}
