package org.jccl.examples.serving;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
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
    private final AtomicBoolean observed = new AtomicBoolean();
    private volatile @Nullable Observation observation;

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

    /** Starts this request's observation, {@code jccl.http.request}, in {@code registry}. */
    public void observe(ObservationRegistry registry, String service) {
        observation = Observation.createNotStarted("jccl.http.request", registry).contextualName(service + " request")
                .lowCardinalityKeyValue("service", service).start();
    }

    /** The request's observation while it lasts, or null (not observed, or already ended). */
    public @Nullable Observation observation() {
        return observed.get() ? null : observation;
    }

    /** Ends the request's observation with {@code outcome} (ok, busy, timeout, ...); once. */
    public void endObservation(String outcome) {
        Observation o = observation;
        if (o == null || !observed.compareAndSet(false, true)) return;
        o.lowCardinalityKeyValue("outcome", outcome);
        o.stop();
    }
}
