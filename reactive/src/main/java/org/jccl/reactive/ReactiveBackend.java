package org.jccl.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jccl.core.Backend;
import org.jccl.core.CommConfig;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.UniqueId;
import org.jccl.core.error.Errors;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Communicator creation as cold {@link Mono}s over a core {@link Backend}. Each subscription creates anew; nothing
 * blocks the subscriber: blocking creation runs on the new communicator's launch thread, and non-blocking creation
 * ({@code CommConfig.builder().blocking(false)}) completes the Mono when jccl's event thread sees the communicator
 * ready. If a subscriber cancels before the communicator is ready, it is closed once ready, so nothing leaks.
 *
 * <pre>{@code
 * ReactiveBackend backend = ReactiveBackend.of(Jccl.backend());
 * Mono<ReactiveCommunicator> comm = backend.initRank(id, nranks, rank, device);
 * }</pre>
 */
public final class ReactiveBackend {
    private final Backend backend;
    private final @Nullable Scheduler scheduler;

    private ReactiveBackend(Backend backend, @Nullable Scheduler scheduler) {
        this.backend = backend;
        this.scheduler = scheduler;
    }

    /** The reactive shape of {@code backend}; its communicators emit signals on the event thread. */
    public static ReactiveBackend of(Backend backend) {
        return new ReactiveBackend(Errors.requireArgument(backend, "backend"), null);
    }

    /** A copy whose Monos, and the communicators they create, emit signals on {@code scheduler}. */
    public ReactiveBackend publishOn(Scheduler scheduler) {
        return new ReactiveBackend(backend, Errors.requireArgument(scheduler, "scheduler"));
    }

    /** The core backend. */
    public Backend backend() {
        return backend;
    }

    /** {@link Backend#initRank(UniqueId, int, int, int, CommConfig, CommOptions)} at subscription. */
    public Mono<ReactiveCommunicator> initRank(UniqueId id, int nranks, int rank, int device, CommConfig config,
                                               CommOptions options) {
        return createdOne(() -> backend.initRank(id, nranks, rank, device, config, options));
    }

    /** {@link Backend#initRank(UniqueId, int, int, int)} at subscription: default configuration and options. */
    public Mono<ReactiveCommunicator> initRank(UniqueId id, int nranks, int rank, int device) {
        return initRank(id, nranks, rank, device, CommConfig.DEFAULT, CommOptions.defaults());
    }

    /** {@link Backend#initRankScalable} at subscription. */
    public Mono<ReactiveCommunicator> initRankScalable(List<UniqueId> ids, int nranks, int rank, int device,
                                                       CommConfig config, CommOptions options) {
        return createdOne(() -> backend.initRankScalable(ids, nranks, rank, device, config, options));
    }

    /** {@link Backend#initAll(int[], CommOptions)} at subscription: one communicator per device, in rank order. */
    public Mono<List<ReactiveCommunicator>> initAll(int[] devices, CommOptions options) {
        return createdAll(() -> backend.initAll(devices, options));
    }

    /** {@link Backend#initAll(int)} at subscription: {@code n} ranks, default options. */
    public Mono<List<ReactiveCommunicator>> initAll(int n) {
        return createdAll(() -> backend.initAll(n));
    }

    private Mono<ReactiveCommunicator> createdOne(Supplier<CompletableFuture<Communicator>> start) {
        return FutureMono.of(start, ReactiveCommunicator::closeUnclaimed, scheduler)
                .map(c -> ReactiveCommunicator.of(c, scheduler));
    }

    private Mono<List<ReactiveCommunicator>> createdAll(Supplier<CompletableFuture<List<Communicator>>> start) {
        return FutureMono.of(start, ReactiveBackend::closeUnclaimed, scheduler).map(list -> {
            List<ReactiveCommunicator> out = new ArrayList<>(list.size());
            for (Communicator c : list) out.add(ReactiveCommunicator.of(c, scheduler));
            return List.copyOf(out);
        });
    }

    private static void closeUnclaimed(List<Communicator> communicators) {
        for (Communicator c : communicators) ReactiveCommunicator.closeUnclaimed(c);
    }
}
