package org.jccl.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jccl.core.engine.Attachments;
import org.jccl.core.engine.CommunicatorState;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;

/** {@link ModuleContext} over one communicator: the funnel for its operations, its lifecycle and the event thread. */
final class CommunicatorContext implements ModuleContext {
    private final Communicator communicator;
    private final CommunicatorState state;

    CommunicatorContext(Communicator communicator) {
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
    public <T> T capability(Class<T> type) {
        Errors.requireArgument(type, "type");
        T capability = state.driverComm().capability(type);
        if (capability == null) {
            throw state.driver().features().unsupported(type.getSimpleName(), null);
        }
        return capability;
    }

    @Override
    public DriverStream stream() {
        return state.stream().driverStream();
    }

    @Override
    public Work issueOn(Stream stream, StreamOperation operation) {
        Errors.requireArgument(stream, "stream");
        Errors.requireArgument(operation, "operation");
        stream.checkOpen();
        if (stream.device() != communicator.device()) {
            throw new InvalidArgumentException(stream + " is on device " + stream.device() + ", not the communicator's "
                    + communicator.device());
        }
        List<Buffer> uses = operation.uses();
        MemoryBlock[] held = new MemoryBlock[uses.size()];
        for (int i = 0; i < held.length; i++) held[i] = Submission.memory(communicator, uses.get(i)).block();
        AutoCloseable hold = operation.retention().retain();
        Work work = new Work(-1, () -> operation.describe(-1), null, held, 0);
        work.whenComplete((v, e) -> Retention.release(hold));
        communicator.backend().driver().setDevice(communicator.device());
        return IssuePath.onStream(stream.queue(), null, work, operation.task()::enqueue);
    }

    @Override
    public MemoryRef memory(Buffer buffer) {
        return Submission.memory(communicator, buffer);
    }

    @Override
    public Buffer part(Buffer parent, long offset, long bytes, Runnable closed) {
        Errors.requireArgument(parent, "parent");
        Errors.requireArgument(closed, "closed");
        return parent.part(offset, bytes, closed);
    }

    @Override
    public <T> CompletableFuture<T> call(String what, Supplier<T> task) {
        Errors.requireArgument(task, "task");
        return state.call(what, task, communicator.options().timeout());
    }

    @Override
    public Work issue(StreamOperation operation, Duration timeout) {
        Errors.requireArgument(operation, "operation");
        Errors.requireArgument(timeout, "timeout");
        SubmissionPart part = Submission.modulePart(communicator, operation::describe, operation.uses(),
                operation.task()::enqueue);
        return Submission.alone(communicator, part, operation.name(), timeout);
    }

    @Override
    public void watch(BooleanSupplier poll) {
        Errors.requireArgument(poll, "poll");
        EventLoop.get().watch(poll::getAsBoolean);
    }

    @Override
    public <T extends Attachment> T attachment(AttachmentKey<T> key) {
        Errors.requireArgument(key, "key");
        Attachments all = state.attachments();
        Told<T> told = all.get(key, () -> new Told<>(key.create(this)));
        return told.attachment();
    }

    /** A module's attachment as the engine tells it the communicator's end. */
    private record Told<T extends Attachment>(T attachment) implements Attachments.Attached {
        @Override
        public void closing() {
            attachment.communicatorClosing();
        }

        @Override
        public void gone() {
            attachment.communicatorGone();
        }
    }
}
