package org.jccl.reactive;

import java.util.concurrent.CountDownLatch;
import org.jccl.core.error.InvalidUsageException;
import reactor.core.Scannable;
import reactor.core.scheduler.Schedulers;

/**
 * Recognises a subscription made by {@code block()} (or {@code blockOptional()}, {@code blockFirst()},
 * {@code blockLast()}) on a thread where Reactor refuses to block, such as jccl's event thread. Reactor subscribes
 * first and refuses afterwards, when the subscriber would start waiting; for jccl's Monos the subscription is the
 * operation, so it would be issued on one rank only, stay pending, and later abort the communicator at its timeout.
 * {@link FutureMono} asks here first and issues nothing.
 *
 * <p>Two checks, the costly one only where the cheap one matched. The chain of downstream subscribers
 * ({@link Scannable.Attr#ACTUAL}) must end in one of Reactor's blocking subscribers — but that subscriber may wait on
 * another thread: {@code a.then(b).block()} called on an ordinary thread subscribes {@code b} on jccl's event thread
 * when {@code a} completes, and a loop moved by {@code subscribeOn} subscribes on its scheduler's thread. So the
 * {@code block} call must also be on this thread's own stack, where Reactor is about to refuse it.
 */
final class BlockingWait {
    /** Operator chains between a Mono and its final subscriber are short; this only bounds a malformed one. */
    private static final int MAX_CHAIN = 256;
    private static final StackWalker STACK = StackWalker.getInstance();

    private BlockingWait() {
    }

    /**
     * Whether {@code subscriber} was made by a {@code block()} that Reactor will refuse on this thread (one of its
     * {@code NonBlocking} threads): nothing may be started for it. Other threads pay one {@code instanceof}.
     */
    static boolean refusedHere(Object subscriber) {
        return Schedulers.isInNonBlockingThread() && endsInABlockingSubscriber(subscriber) && blockIsOnThisStack();
    }

    private static boolean endsInABlockingSubscriber(Object subscriber) {
        Object s = subscriber;
        for (int i = 0; i < MAX_CHAIN && s != null; i++) {
            if (isReactorsBlockingSubscriber(s)) return true;
            if (!(s instanceof Scannable)) return false;
            s = ((Scannable) s).scanUnsafe(Scannable.Attr.ACTUAL);
        }
        return false;
    }

    /** Reactor's blocking subscribers (BlockingSingleSubscriber and its kin) are latches the caller awaits. */
    private static boolean isReactorsBlockingSubscriber(Object s) {
        return s instanceof CountDownLatch && s.getClass().getPackageName().equals("reactor.core.publisher");
    }

    /** Whether this thread is inside {@code Mono.block*} or {@code Flux.block*}, subscribing before it waits. */
    private static boolean blockIsOnThisStack() {
        return STACK.walk(frames -> frames.anyMatch(f -> f.getMethodName().startsWith("block")
                && (f.getClassName().equals("reactor.core.publisher.Mono") || f.getClassName().equals("reactor.core.publisher.Flux"))));
    }

    /** The error such a subscription receives (Reactor's own {@code IllegalStateException} reaches the caller). */
    static InvalidUsageException refusal() {
        return new InvalidUsageException("block() is not supported on the non-blocking thread "
                + Thread.currentThread().getName() + " (it would wait for the thread that completes jccl's work);"
                + " nothing was issued: compose with flatMap/then, or move signals with publishOn(scheduler)");
    }
}
