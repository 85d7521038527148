package org.jccl.reactive;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jccl.core.Modules;
import org.jccl.core.error.Errors;
import org.jccl.core.module.StreamOperation;
import reactor.core.publisher.Mono;

/**
 * For modules built on core (window-rma, device-api, KV transfers): gives their calls the reactive shape of a
 * {@link ReactiveCommunicator} — cold Monos, one core call per subscription, signals on the shape's scheduler,
 * the shape's timeout — exactly as the communicator's own operations have it. Applications do not need it.
 */
public final class ReactiveModules {
    private ReactiveModules() {
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

    /**
     * A Mono that, at each subscription, makes a module's operation with {@code operation} (which checks its
     * arguments, so a bad one fails the subscription) and issues it with {@code shape}'s timeout.
     */
    public static Mono<Void> issue(ReactiveCommunicator shape, Supplier<StreamOperation> operation) {
        Errors.requireArgument(operation, "operation");
        return mono(shape, () -> Modules.context(shape.communicator()).issue(operation.get(), timeout(shape)));
    }

    /** The timeout {@code shape}'s operations use: its own ({@link ReactiveCommunicator#timeout(Duration)}) or the communicator's. */
    public static Duration timeout(ReactiveCommunicator shape) {
        Errors.requireArgument(shape, "shape");
        Duration own = shape.ownTimeout();
        return own != null ? own : shape.communicator().options().timeout();
    }
}
