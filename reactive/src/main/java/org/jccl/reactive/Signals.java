package org.jccl.reactive;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jccl.core.Communicator;
import org.jccl.core.Work;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Turns core's futures into cold Monos: each subscription makes one fresh core call (Lettuce's
 * {@code createMono(Supplier)}), and an exception thrown by that call becomes the Mono's error.
 */
final class Signals {
    private Signals() {
    }

    /**
     * A Mono that issues one work at subscription and completes when it does. Cancelling only detaches: the work
     * keeps its buffers and runs to completion.
     */
    static Mono<Void> completion(Supplier<Work> issue, @Nullable Scheduler scheduler) {
        Mono<Void> mono = Mono.create(sink -> {
            Work work = issue.get();
            work.whenComplete((ignored, error) -> {
                if (error == null) sink.success();
                else sink.error(unwrap(error));
            });
        });
        return on(mono, scheduler);
    }

    /**
     * A Mono that starts a creation (a communicator, a registration...) at subscription and emits its result. If
     * the subscriber cancels before the result arrives, {@code orphan} receives it when it does, so nothing leaks.
     */
    static <T> Mono<T> creation(Supplier<CompletableFuture<T>> start, Consumer<? super T> orphan,
                                @Nullable Scheduler scheduler) {
        Mono<T> mono = Mono.create(sink -> {
            CompletableFuture<T> future = start.get();
            AtomicBoolean settled = new AtomicBoolean();
            sink.onCancel(() -> {
                if (settled.compareAndSet(false, true)) future.thenAccept(orphan);
            });
            future.whenComplete((value, error) -> {
                if (!settled.compareAndSet(false, true)) return;
                if (error != null) sink.error(unwrap(error));
                else sink.success(value);
            });
        });
        return on(mono, scheduler);
    }

    /** A Mono that starts an action without a result (close, abort) at subscription and completes with it. */
    static Mono<Void> action(Supplier<CompletableFuture<Void>> start, @Nullable Scheduler scheduler) {
        Mono<Void> mono = Mono.create(sink -> start.get().whenComplete((ignored, error) -> {
            if (error == null) sink.success();
            else sink.error(unwrap(error));
        }));
        return on(mono, scheduler);
    }

    /** Closes communicators nobody will receive, without blocking the thread that found them orphaned. */
    static void closeOrphan(Communicator communicator) {
        communicator.closeAsync();
    }

    static <T> Mono<T> on(Mono<T> mono, @Nullable Scheduler scheduler) {
        return scheduler == null ? mono : mono.publishOn(scheduler);
    }

    /** The exception the user should see: core's typed exception, not the future's wrapper. */
    static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
