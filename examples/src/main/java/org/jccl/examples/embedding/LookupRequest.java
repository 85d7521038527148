package org.jccl.examples.embedding;

import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One HTTP request on rank 0: the ids to look up, the simulated compute time of its step, and the promise of its
 * rows. A request whose client went away before its step began is skipped; once its step began it runs to the end on
 * every rank (the collectives are already ordered) and its answer is dropped.
 */
final class LookupRequest {
    final int[] ids;
    final int computeMillis;
    private final Sinks.One<float[][]> answer = Sinks.one();
    private final AtomicBoolean abandoned = new AtomicBoolean();

    LookupRequest(int[] ids, int computeMillis) {
        this.ids = ids;
        this.computeMillis = computeMillis;
    }

    /** The rows, in the order of {@link #ids}. */
    Mono<float[][]> answer() {
        return answer.asMono();
    }

    void succeed(float[][] rows) {
        answer.tryEmitValue(rows);
    }

    void fail(Throwable error) {
        answer.tryEmitError(error);
    }

    /** The client no longer waits (it disconnected or its timeout passed). */
    void abandon() {
        abandoned.set(true);
    }

    boolean isAbandoned() {
        return abandoned.get();
    }
}
