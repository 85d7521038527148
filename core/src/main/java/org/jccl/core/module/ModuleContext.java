package org.jccl.core.module;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Work;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryRef;

/**
 * What a module built on core may do with one communicator: reach the driver and its capabilities, issue operations
 * of its own in the communicator's one issue order, run set-up calls on its launch thread, poll on the event thread,
 * and keep its state attached to the communicator. Obtained from
 * {@link org.jccl.core.Modules#context(Communicator)}: one instance per communicator.
 *
 * <p>Everything issued through it follows the communicator's lifecycle (refused once closed or aborted, failed by an
 * abort or a timeout) and completes on the process's event thread, exactly like the communicator's own operations.
 *
 * <p>Threading: {@link #call} and {@link #issue} run their tasks on the communicator's launch thread, the only
 * thread that may call the library for this communicator; {@link #watch} polls on the event thread, which must never
 * block.
 */
public interface ModuleContext {
    /** The communicator this context belongs to. */
    Communicator communicator();

    /** The backend's driver: the loaded library, its features, memory and events. */
    Driver driver();

    /** The backend's communicator (for NCCL, the {@code ncclComm_t}). */
    DriverComm driverComm();

    /**
     * The driver's implementation of a module contract of the driver side ({@link org.jccl.core.spi.OneSidedComm},
     * {@link org.jccl.core.spi.DeviceCommSupport}), for this communicator.
     *
     * @throws org.jccl.core.error.UnsupportedFeatureException if this backend does not offer it
     */
    <T> T capability(Class<T> type);

    /** The communicator's stream, on which {@link #issue}'s tasks enqueue. */
    DriverStream stream();

    /**
     * Enqueues {@code operation} on an application's {@code stream} (from {@link org.jccl.core.Backend#createStream}) of
     * this communicator's device, at once, on the calling thread, which gets the device made current (as a launch needs
     * it); the work completes when the stream passed it. Its buffers and its retention are held until then. Outside the
     * communicator's call order: for work that waits on the device for something of its own (a module's signal), not
     * for collective calls.
     *
     * @throws org.jccl.core.error.InvalidArgumentException for another device's stream, or a buffer off the device
     * @throws org.jccl.core.error.InvalidUsageException    for a closed stream, buffer, or what the retention keeps
     */
    Work issueOn(org.jccl.core.Stream stream, StreamOperation operation);

    /**
     * The memory of {@code buffer}: checked open and on the communicator's device (or pinned host memory), else an
     * {@link org.jccl.core.error.InvalidArgumentException} / {@link org.jccl.core.error.InvalidUsageException}.
     */
    MemoryRef memory(Buffer buffer);

    /**
     * {@code bytes} of {@code parent} from {@code offset} as a buffer of its own, for a module that sub-allocates
     * (a pool in one registered window): closing it refuses it to later operations and runs {@code closed} once; it is
     * closed with {@code parent} too. Its memory is the parent's, kept alive by pending work as for any buffer.
     *
     * @throws org.jccl.core.error.InvalidArgumentException for a range outside {@code parent}
     * @throws org.jccl.core.error.InvalidUsageException    for a closed parent
     */
    Buffer part(Buffer parent, long offset, long bytes, Runnable closed);

    /**
     * Runs {@code task} on the launch thread after everything issued before it; the future carries its result, or
     * fails if the communicator is aborted or closed first. For collective set-up calls (registering a window,
     * creating a device communicator). Like a work, a call not finished within the communicator's timeout (a peer
     * that never makes the matching call) fails with a {@link org.jccl.core.error.WorkTimeoutException} saying what
     * this rank waits for, and under {@link org.jccl.core.TimeoutPolicy#ABORT_COMMUNICATOR} the communicator is
     * aborted, which ends the call's wait.
     */
    <T> CompletableFuture<T> call(String what, Supplier<T> task);

    /**
     * Issues {@code operation} in issue order with the communicator's other operations: its task enqueues on
     * {@link #stream()} from the launch thread; the work holds its buffers alive and completes when the event recorded
     * after it completes, or fails like any work (abort, async error, {@code timeout}: zero for none).
     */
    Work issue(StreamOperation operation, Duration timeout);

    /** {@link #issue(StreamOperation, Duration)} with the communicator's timeout. */
    default Work issue(StreamOperation operation) {
        return issue(operation, communicator().options().timeout());
    }

    /** Polls {@code poll} on the event thread every round until it returns true; it must not block. */
    void watch(BooleanSupplier poll);

    /**
     * The communicator's attachment for {@code key}, made on first use and ended with the communicator (see
     * {@link Attachment} for the order).
     *
     * @throws org.jccl.core.error.InvalidUsageException if the communicator is closed or aborted and has none yet
     */
    <T extends Attachment> T attachment(AttachmentKey<T> key);
}
