package org.jccl.reactive;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The one bridge from core's futures to Reactor, used by every Mono of this module (operations, groups, creation,
 * lifecycle, the pipeline's awaits). A {@link org.jccl.core.Work} is a {@code CompletableFuture<Void>}, so works and
 * communicator-level calls take the same path.
 *
 * <p>Each subscription makes one fresh core call (Lettuce's {@code createMono(Supplier)}): that keeps every Mono
 * cold, so subscription order is issue order. An exception thrown by the call (bad arguments, a missing feature)
 * becomes the Mono's error, and a failed future's error reaches the subscriber as core's typed exception.
 */
final class FutureMono {
    private FutureMono() {
    }

    /**
     * A Mono that starts {@code start} at each subscription and emits its result (completes empty for a
     * {@code Void} result). Cancelling only detaches: what was started runs to completion.
     */
    static <T> Mono<T> of(Supplier<? extends CompletableFuture<? extends T>> start, @Nullable Scheduler scheduler) {
        return of(start, null, scheduler);
    }

    /**
     * {@link #of(Supplier, Scheduler)} for results that hold resources (a communicator, a registration): if the
     * subscriber cancels before the result arrives, {@code unclaimed} receives it when it does, so nothing leaks.
     */
    static <T> Mono<T> of(Supplier<? extends CompletableFuture<? extends T>> start,
                          @Nullable Consumer<? super T> unclaimed, @Nullable Scheduler scheduler) {
        Mono<T> mono = Mono.create(sink -> {
            CompletableFuture<? extends T> future = start.get();
            // Exactly one of cancellation and completion wins, so a result is either emitted or handed to unclaimed.
            AtomicBoolean settled = new AtomicBoolean();
            if (unclaimed != null) {
                sink.onCancel(() -> {
                    if (settled.compareAndSet(false, true)) future.thenAccept(unclaimed);
                });
            }
            future.whenComplete((value, error) -> {
                if (!settled.compareAndSet(false, true)) return;
                if (error != null) sink.error(unwrap(error));
                else sink.success(value);
            });
        });
        return publishOn(mono, scheduler);
    }

    /** {@code mono} emitting on {@code scheduler}, or unchanged (signals on jccl's event thread) when it is null. */
    static <T> Mono<T> publishOn(Mono<T> mono, @Nullable Scheduler scheduler) {
        return scheduler == null ? mono : mono.publishOn(scheduler);
    }

    /** The exception the user should see: core's typed exception, not the future's wrapper around it. */
    static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
