package org.jccl.rma.reactive;

import java.util.List;
import java.util.function.Supplier;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.reactive.ReactiveModules;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import reactor.core.publisher.Mono;

/**
 * The reactive shape of {@link OneSided}: the same calls as cold {@link Mono}s, issued at subscription in
 * subscription order with the communicator's other operations, completing on the event thread (or the shape's
 * scheduler), failing with core's typed exceptions. Cancelling a subscriber detaches: an issued put still completes.
 */
public final class ReactiveOneSided {
    private final ReactiveCommunicator shape;
    private final OneSided core;

    private ReactiveOneSided(ReactiveCommunicator shape) {
        this.shape = shape;
        this.core = OneSided.of(shape.communicator());
    }

    /** The one-sided API of {@code communicator}'s reactive shape (its scheduler and timeout). */
    public static ReactiveOneSided of(ReactiveCommunicator communicator) {
        return new ReactiveOneSided(Errors.requireArgument(communicator, "communicator"));
    }

    /** The core shape. */
    public OneSided core() {
        return core;
    }

    public ReactiveCommunicator communicator() {
        return shape;
    }

    /** {@link OneSided#limits()}. */
    public OneSidedLimits limits() {
        return core.limits();
    }

    /** {@link OneSided#windows()}. */
    public List<Window> windows() {
        return core.windows();
    }

    /** {@link OneSided#allocate(long)}: memory for a window, at once. */
    public Buffer allocate(long bytes) {
        return core.allocate(bytes);
    }

    /** {@link OneSided#register} at subscription; a window made for a subscriber that cancelled is closed. */
    public Mono<Window> register(Buffer buffer, WindowFlag... flags) {
        return ReactiveModules.mono(shape, () -> core.register(buffer, flags), Window::closeAsync);
    }

    /**
     * {@link OneSided#registerAll} at subscription: a window of {@code bytes} on each of {@code communicators} (the
     * ranks this process drives), every registration issued before any is waited for; on the first communicator's
     * scheduler. Windows made for a subscriber that cancelled are closed.
     */
    public static Mono<List<Window>> registerAll(List<ReactiveCommunicator> communicators, long bytes, WindowFlag... flags) {
        Errors.requireArgument(communicators, "communicators");
        if (communicators.isEmpty()) throw new InvalidArgumentException("registerAll needs at least one communicator");
        List<Communicator> cores = communicators.stream().map(ReactiveCommunicator::communicator).toList();
        return ReactiveModules.mono(communicators.get(0), () -> OneSided.registerAll(cores, bytes, flags), OneSided::closeAll);
    }

    /** {@link OneSided#closeAll} at subscription. */
    public static Mono<Void> closeAll(List<Window> windows) {
        Errors.requireArgument(windows, "windows");
        return Mono.defer(() -> Mono.fromFuture(OneSided.closeAll(windows)));
    }

    /** {@link Window#closeAsync()} at subscription. */
    public Mono<Void> close(Window window) {
        return ReactiveModules.mono(shape, () -> Errors.requireArgument(window, "window").closeAsync());
    }

    /** {@link OneSided#putSignal(Window, Buffer, long, DataType, int, long)} at subscription. */
    public Mono<Void> putSignal(Window window, Buffer source, long count, DataType type, int peer, long peerOffset) {
        return putSignal(window, source, count, type, peer, peerOffset, 0, 0);
    }

    /** {@link OneSided#putSignal(Window, Buffer, long, DataType, int, long, int, int)} at subscription. */
    public Mono<Void> putSignal(Window window, Buffer source, long count, DataType type, int peer, long peerOffset,
                                int signalIndex, int context) {
        return issued(() -> core.putSignalOperation(window, source, count, type, peer, peerOffset, signalIndex, context));
    }

    /** {@link OneSided#signal(int)} at subscription. */
    public Mono<Void> signal(int peer) {
        return signal(peer, 0, 0);
    }

    /** {@link OneSided#signal(int, int, int)} at subscription. */
    public Mono<Void> signal(int peer, int signalIndex, int context) {
        return issued(() -> core.signalOperation(peer, signalIndex, context));
    }

    /** {@link OneSided#waitSignal} at subscription. */
    public Mono<Void> waitSignal(SignalWait... waits) {
        return issued(() -> core.waitSignalOperation(waits));
    }

    private Mono<Void> issued(Supplier<StreamOperation> operation) {
        return ReactiveModules.issue(shape, operation);
    }
}
