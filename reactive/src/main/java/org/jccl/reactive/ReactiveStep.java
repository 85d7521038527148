package org.jccl.reactive;

import org.jccl.core.Step;
import org.jccl.core.error.Errors;
import reactor.core.publisher.Mono;

/**
 * The reactive shape of {@link Step}: built and replayed as cold {@link Mono}s on a {@link ReactiveCommunicator}'s
 * scheduler. Each subscription to {@link #replay()} replays once, in subscription order with the communicator's
 * other operations; cancelling only detaches.
 */
public final class ReactiveStep {
    private final ReactiveCommunicator shape;
    private final Step core;

    private ReactiveStep(ReactiveCommunicator shape, Step core) {
        this.shape = shape;
        this.core = core;
    }

    /**
     * {@link Step.Builder#build()} at subscription: captures the builder's operations (the builder of {@code shape}'s
     * communicator). A step made for a subscriber that cancelled is closed.
     */
    public static Mono<ReactiveStep> build(ReactiveCommunicator shape, Step.Builder builder) {
        Errors.requireArgument(shape, "shape");
        Errors.requireArgument(builder, "builder");
        return FutureMono.of(builder::build, Step::closeAsync, shape.scheduler()).map(step -> new ReactiveStep(shape, step));
    }

    /** The core shape. */
    public Step core() {
        return core;
    }

    public ReactiveCommunicator communicator() {
        return shape;
    }

    /** {@link Step#replay()} at subscription. */
    public Mono<Void> replay() {
        return FutureMono.of(core::replay, shape.scheduler());
    }

    /** {@link Step#closeAsync()} at subscription. */
    public Mono<Void> closeAsync() {
        return FutureMono.of(core::closeAsync, shape.scheduler());
    }

    @Override
    public String toString() {
        return "Reactive" + core;
    }
}
