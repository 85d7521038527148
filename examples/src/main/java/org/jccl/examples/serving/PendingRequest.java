package org.jccl.examples.serving;

import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A request accepted by rank 0 and the promise of its answer. A request whose client went away (it disconnected or
 * its timeout passed) is abandoned: skipped if its step has not begun; once begun, the step runs to its end on every
 * rank (its collectives are already ordered) and the answer is dropped.
 *
 * @param <T> the answer
 */
public class PendingRequest<T> {
    private final Sinks.One<T> answer = Sinks.one();
    private final AtomicBoolean abandoned = new AtomicBoolean();

    /** The answer, once its step completed. */
    public Mono<T> answer() {
        return answer.asMono();
    }

    /** Completes the request. */
    public void succeed(T value) {
        answer.tryEmitValue(value);
    }

    /** Fails the request (its step failed). */
    public void fail(Throwable error) {
        answer.tryEmitError(error);
    }

    /** The client no longer waits. */
    public void abandon() {
        abandoned.set(true);
    }

    /** Whether the client no longer waits: a step not yet begun skips the request. */
    public boolean isAbandoned() {
        return abandoned.get();
    }
}
