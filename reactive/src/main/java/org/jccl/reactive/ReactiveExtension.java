package org.jccl.reactive;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jccl.core.error.Errors;
import reactor.core.publisher.Mono;

/**
 * For modules built on core (window-rma, device-api): gives their calls the reactive shape of a
 * {@link ReactiveCommunicator} — cold Monos, one core call per subscription, signals on the shape's scheduler,
 * the shape's timeout — exactly as the communicator's own operations have it. Applications do not need it.
 */
public final class ReactiveExtension {
    private ReactiveExtension() {
    }

    /**
     * A Mono that makes the core call {@code call} at each subscription (a {@link org.jccl.core.Work} or a
     * creation step) and completes with it, on {@code shape}'s scheduler. A call that throws fails the subscription.
     */
    public static <T> Mono<T> mono(ReactiveCommunicator shape, Supplier<? extends CompletableFuture<? extends T>> call) {
        Errors.requireArgument(shape, "shape");
        return FutureMono.of(Errors.requireArgument(call, "call"), shape.scheduler());
    }

    /**
     * {@link #mono(ReactiveCommunicator, Supplier)} for results that hold resources: if the subscriber cancels before
     * the result arrives, {@code unclaimed} receives it (to close it), so nothing leaks.
     */
    public static <T> Mono<T> mono(ReactiveCommunicator shape, Supplier<? extends CompletableFuture<? extends T>> call,
                                   Consumer<? super T> unclaimed) {
        Errors.requireArgument(shape, "shape");
        return FutureMono.of(Errors.requireArgument(call, "call"), Errors.requireArgument(unclaimed, "unclaimed"),
                shape.scheduler());
    }

    /** The timeout {@code shape}'s operations use: its own ({@link ReactiveCommunicator#timeout(Duration)}) or the communicator's. */
    public static Duration timeout(ReactiveCommunicator shape) {
        Errors.requireArgument(shape, "shape");
        Duration own = shape.ownTimeout();
        return own != null ? own : shape.communicator().options().timeout();
    }
}
