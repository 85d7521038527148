package org.jccl.reactive;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The one bridge from core's futures to Reactor, used by every Mono of this module (operations, groups, creation,
 * lifecycle, the pipeline's awaits). A {@link org.jccl.core.Work} is a {@code CompletableFuture<Void>}, so works and
 * communicator-level calls take the same path.
 *
 * <p>Each subscription makes one fresh core call, which keeps every Mono cold: subscription order is issue order.
 * The call is made before the subscriber is told of its subscription, so that an operation reaches its launch queue
 * without waiting for the subscriber's set-up (a round trip of a small operation is a few microseconds). An
 * exception thrown by the call (bad arguments, a missing feature) becomes the Mono's error, and a failed future's
 * error reaches the subscriber as core's typed exception. A subscription by {@code block()} on a thread where Reactor
 * refuses to block (jccl's event thread) starts nothing ({@link BlockingWait}). With tracing on, the call is made with
 * the Micrometer observation of the subscriber's context current ({@link ObservationParent}). It is its own operator
 * rather than {@code Mono.create} because it is on every operation's path: one subscription object, one state word, no
 * sink machinery.
 *
 * @param <T> the result; a {@code Void} future completes the Mono empty
 */
final class FutureMono<T> extends Mono<T> {
    private final Supplier<? extends CompletableFuture<? extends T>> start;
    private final @Nullable Consumer<? super T> unclaimed;

    private FutureMono(Supplier<? extends CompletableFuture<? extends T>> start, @Nullable Consumer<? super T> unclaimed) {
        this.start = start;
        this.unclaimed = unclaimed;
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
     * subscriber cancels before the result is emitted, {@code unclaimed} receives it when it arrives, so nothing leaks.
     */
    static <T> Mono<T> of(Supplier<? extends CompletableFuture<? extends T>> start,
                          @Nullable Consumer<? super T> unclaimed, @Nullable Scheduler scheduler) {
        return publishOn(onAssembly(new FutureMono<>(start, unclaimed)), scheduler);
    }

    /** {@code mono} emitting on {@code scheduler}, or unchanged (signals on jccl's event thread) when it is null. */
    static <T> Mono<T> publishOn(Mono<T> mono, @Nullable Scheduler scheduler) {
        return scheduler == null ? mono : mono.publishOn(scheduler);
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        if (BlockingWait.refusedHere(actual)) { // block() on a NonBlocking thread: refuse before the call, not after
            Operators.error(actual, BlockingWait.refusal());
            return;
        }
        CompletableFuture<? extends T> future;
        try {
            future = Objects.requireNonNull(ObservationParent.call(actual, start), "the call returned no future");
        } catch (Throwable e) {
            Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
            return;
        }
        Emission<T> emission = new Emission<>(actual, unclaimed);
        actual.onSubscribe(emission);
        future.whenComplete(emission);
    }

    /** The exception the user should see: core's typed exception, not the future's wrapper around it. */
    static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * One subscription: the result meets the subscriber's request (a value is emitted only once requested; an empty
     * completion or an error needs no request) or its cancellation, whichever way round they come. Exactly one side
     * moves the state to {@link #DONE} or {@link #CANCELLED}, so a result is either emitted or handed to
     * {@code unclaimed}, never both.
     */
    private static final class Emission<T> implements Subscription, BiConsumer<T, Throwable> {
        private static final int WAITING = 0;
        private static final int REQUESTED = 1;
        private static final int HAS_VALUE = 2;
        private static final int DONE = 3;
        private static final int CANCELLED = 4;
        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Emission> STATE =
                AtomicIntegerFieldUpdater.newUpdater(Emission.class, "state");

        private final CoreSubscriber<? super T> actual;
        private final @Nullable Consumer<? super T> unclaimed;
        /** Written before the state becomes HAS_VALUE, read after a transition out of it. */
        private @Nullable T value;
        private volatile int state;

        Emission(CoreSubscriber<? super T> actual, @Nullable Consumer<? super T> unclaimed) {
            this.actual = actual;
            this.unclaimed = unclaimed;
        }

        /** The future's completion, usually on jccl's event thread. */
        @Override
        public void accept(@Nullable T result, @Nullable Throwable error) {
            if (error != null || result == null) {
                if (!terminate()) return; // cancelled: an error or an empty result has nothing to hand back
                if (error != null) actual.onError(unwrap(error));
                else actual.onComplete();
                return;
            }
            value = result;
            while (true) {
                int s = state;
                if (s == CANCELLED) {
                    value = null;
                    giveBack(result);
                    return;
                }
                if (s == REQUESTED && STATE.compareAndSet(this, REQUESTED, DONE)) {
                    value = null;
                    emit(result);
                    return;
                }
                if (s == WAITING && STATE.compareAndSet(this, WAITING, HAS_VALUE)) return; // request() emits it
                if (s == DONE || s == HAS_VALUE) return; // a future completes once: not reached
            }
        }

        @Override
        public void request(long n) {
            if (!Operators.validate(n)) return;
            while (true) {
                int s = state;
                if (s == WAITING && STATE.compareAndSet(this, WAITING, REQUESTED)) return;
                if (s == HAS_VALUE && STATE.compareAndSet(this, HAS_VALUE, DONE)) {
                    T v = value;
                    value = null;
                    emit(v);
                    return;
                }
                if (s != WAITING && s != HAS_VALUE) return; // already requested, done or cancelled
            }
        }

        @Override
        public void cancel() {
            while (true) {
                int s = state;
                if (s == DONE || s == CANCELLED) return;
                if (STATE.compareAndSet(this, s, CANCELLED)) {
                    if (s == HAS_VALUE) { // arrived, not yet emitted: ours to hand back
                        T v = value;
                        value = null;
                        giveBack(v);
                    }
                    return; // otherwise accept() sees CANCELLED and hands back what arrives
                }
            }
        }

        /** Moves to DONE for a signal that needs no request; false if cancelled or already done. */
        private boolean terminate() {
            while (true) {
                int s = state;
                if (s == DONE || s == CANCELLED) return false;
                if (STATE.compareAndSet(this, s, DONE)) return true;
            }
        }

        private void emit(@Nullable T v) {
            if (v != null) actual.onNext(v);
            actual.onComplete();
        }

        private void giveBack(@Nullable T v) {
            if (unclaimed != null && v != null) unclaimed.accept(v);
        }
    }
}
