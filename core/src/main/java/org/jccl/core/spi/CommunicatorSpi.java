package org.jccl.core.spi;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Work;

/**
 * The extension point for modules that build on core — memory windows and one-sided operations, device
 * communicators, user kernels. Obtained from {@link Communicator#spi()}. Everything issued through it joins the
 * communicator's one issue order, follows its lifecycle (refused once closed or aborted, failed by an abort) and
 * completes on the process's event thread, exactly like the communicator's own operations.
 *
 * <p>Threading: {@link #call} and {@link #issue} run their tasks on the communicator's launch thread, the only
 * thread that may call the library for this communicator; {@link #watch} polls on the event thread, which must
 * never block.
 */
public interface CommunicatorSpi {
    /** The communicator this SPI belongs to. */
    Communicator communicator();

    /** The backend's driver: the loaded library, its features, memory and events. */
    Driver driver();

    /** The backend's communicator (for NCCL, the {@code ncclComm_t}). */
    DriverComm driverComm();

    /** The communicator's stream, on which {@link #issue}'s tasks enqueue. */
    DriverStream stream();

    /**
     * The memory of {@code buffer}: checked open and on the communicator's device (or pinned host memory), else an
     * {@link org.jccl.core.error.InvalidArgumentException} / {@link org.jccl.core.error.InvalidUsageException}.
     */
    MemoryRef memory(Buffer buffer);

    /**
     * Runs {@code task} on the launch thread after everything issued before it; the future carries its result, or
     * fails if the communicator is aborted or closed first. For collective set-up calls (registering a window,
     * creating a device communicator).
     */
    <T> CompletableFuture<T> call(String what, Supplier<T> task);

    /**
     * Issues an operation of the module's own: {@code task} enqueues it on {@link #stream()} from the launch thread
     * in issue order; the returned work holds {@code uses} alive and completes when the event recorded after it
     * completes, or fails like any work (abort, async error, the timeout: zero for none).
     *
     * @param what a description for messages, e.g. {@code putSignal(count=8, peer=1)}
     */
    Work issue(String what, List<Buffer> uses, Duration timeout, StreamTask task);

    /** Polls {@code poll} on the event thread every round until it returns true; it must not block. */
    void watch(BooleanSupplier poll);

    /** What {@link #issue} enqueues on the communicator's stream. */
    @FunctionalInterface
    interface StreamTask {
        void enqueue(DriverStream stream);
    }
}
