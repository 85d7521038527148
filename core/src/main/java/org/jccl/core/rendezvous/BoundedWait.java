package org.jccl.core.rendezvous;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How the blocking twins ({@code ...Now} methods) wait for their futures: never longer than a bound, cancelling the
 * future when the bound passes, and rethrowing the failure's cause unwrapped (a {@link RendezvousException} or the
 * original runtime exception) rather than an {@link ExecutionException}. Also caps the durations the server
 * schedules, so no deadline arithmetic overflows.
 */
final class BoundedWait {
    /** The longest wait anything here schedules: longer ones are shortened to it, so no duration arithmetic overflows. */
    static final Duration LONGEST = Duration.ofDays(30);

    private BoundedWait() {
    }

    /** The duration, or {@link #LONGEST} if it is longer. */
    static Duration capped(Duration d) {
        return d.compareTo(LONGEST) > 0 ? LONGEST : d;
    }

    /** Waits at most timeout (capped) for future; what names the operation in error messages. */
    static <T> T await(CompletableFuture<T> future, Duration timeout, String what) {
        try {
            return future.get(capped(timeout).toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(false);
            throw new RendezvousException("interrupted while " + what, e);
        } catch (TimeoutException e) {
            future.cancel(false);
            throw new RendezvousTimeoutException(what + " took longer than " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw unwrap(e.getCause(), what);
        }
    }

    /** The failure behind any number of completion wrappers, as an unchecked exception to rethrow. */
    static RuntimeException unwrap(Throwable t, String what) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof RendezvousException r) return r;
        if (t instanceof RuntimeException r) return r;
        return new RendezvousException(what + " failed", t);
    }
}
