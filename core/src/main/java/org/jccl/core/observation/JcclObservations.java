package org.jccl.core.observation;

import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.Jccl;
import org.jccl.core.error.Errors;

/**
 * Makes a Micrometer {@link io.micrometer.observation.Observation} of every communicator operation of the process
 * (collectives, point-to-point, groups, modules' operations; not plain stream copies), named
 * {@value OperationConvention#NAME}, from issue to completion. Its parent is the observation current on the issuing
 * thread ({@link ObservationRegistry#getCurrentObservation()}); {@code jccl-reactive} makes the one in the Reactor
 * context of the subscription current while it issues, so a request's span shows the collectives it caused.
 *
 * <pre>{@code
 * try (JcclObservations observations = JcclObservations.register(observationRegistry)) {
 *     ... // every operation issued now is observed
 * }
 * }</pre>
 *
 * Observations start on the issuing thread and stop on the thread that completes the work (usually jccl's event
 * thread): the registry's handlers run there and must not block. Key values come from {@link OperationConvention};
 * a {@code GlobalObservationConvention} registered on the registry replaces them.
 */
public final class JcclObservations implements AutoCloseable {
    /** How many are registered, so that the reactive bridge does nothing while none is. */
    private static final AtomicInteger REGISTERED = new AtomicInteger();

    private final ObservationObserver observer;
    private boolean closed;

    private JcclObservations(ObservationObserver observer) {
        this.observer = observer;
    }

    /** Observes every operation issued from now on into {@code registry}, until {@link #close()}. */
    public static JcclObservations register(ObservationRegistry registry) {
        Errors.requireArgument(registry, "registry");
        JcclObservations observations = new JcclObservations(new ObservationObserver(registry));
        REGISTERED.incrementAndGet();
        Jccl.addWorkObserver(observations.observer);
        return observations;
    }

    /** Whether any {@code JcclObservations} is registered: while none is, callers need not look for a parent. */
    public static boolean anyRegistered() {
        return REGISTERED.get() > 0;
    }

    /** Stops observing new operations (those in flight still stop their observations); idempotent. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        Jccl.removeWorkObserver(observer);
        REGISTERED.decrementAndGet();
    }
}
