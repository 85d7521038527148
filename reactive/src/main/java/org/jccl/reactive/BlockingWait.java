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
 */
final class BlockingWait {
    /** Operator chains between a Mono and its final subscriber are short; this only bounds a malformed one. */
    private static final int MAX_CHAIN = 256;

    private BlockingWait() {
    }

    /**
     * Whether {@code subscriber} ends in one of Reactor's blocking subscribers while this thread is one of Reactor's
     * {@code NonBlocking} ones: the subscription will be refused, so nothing may be started for it. Walks the chain of
     * downstream subscribers ({@link Scannable.Attr#ACTUAL}) only on such threads, so other threads pay one check.
     */
    static boolean refusedHere(Object subscriber) {
        if (!Schedulers.isInNonBlockingThread()) return false;
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

    /** The error such a subscription receives (Reactor's own {@code IllegalStateException} reaches the caller). */
    static InvalidUsageException refusal() {
        return new InvalidUsageException("block() is not supported on the non-blocking thread "
                + Thread.currentThread().getName() + " (it would wait for the thread that completes jccl's work);"
                + " nothing was issued: compose with flatMap/then, or move signals with publishOn(scheduler)");
    }
}
