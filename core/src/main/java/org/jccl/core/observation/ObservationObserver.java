package org.jccl.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.ConcurrentHashMap;
import org.jccl.core.Work;
import org.jccl.core.WorkObserver;
import org.jspecify.annotations.Nullable;

/** Starts an observation when a work is issued and stops it when the work completes. */
final class ObservationObserver implements WorkObserver {
    private final ObservationRegistry registry;
    /** The observations of works in flight; a work's identity is its key (a future does not override equals). */
    private final ConcurrentHashMap<Work, Observation> inFlight = new ConcurrentHashMap<>();

    ObservationObserver(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void issued(Work work) {
        // The parent is the observation current on this thread: the caller's, or the one jccl-reactive made current.
        Observation observation = Observation.createNotStarted(null, OperationConvention.INSTANCE,
                () -> new OperationContext(work), registry);
        if (observation.isNoop()) return;
        inFlight.put(work, observation.start());
    }

    @Override
    public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
        Observation observation = inFlight.remove(work);
        if (observation == null) return;
        if (error != null) observation.error(error);
        observation.stop();
    }
}
