package org.jccl.reactive;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.util.function.Supplier;
import org.jccl.core.observation.JcclObservations;
import reactor.core.CoreSubscriber;

/**
 * Makes the Micrometer observation of a subscription's Reactor context (where Reactor's and Spring's instrumentation
 * put it, under {@link ObservationThreadLocalAccessor#KEY}) current while the core call is made, so that core's
 * observation of the operation ({@link JcclObservations}) takes it as its parent. A Reactor context crosses threads
 * where a thread-local does not: the second operation of {@code a.then(b)} is subscribed on jccl's event thread.
 *
 * <p>Without Micrometer Observation on the class path, or while no {@code JcclObservations} is registered, the call is
 * made as it is, and no class of Micrometer is loaded.
 */
final class ObservationParent {
    private static final boolean MICROMETER = present("io.micrometer.observation.Observation");

    private ObservationParent() {
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, ObservationParent.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** {@code call.get()}, with the observation of {@code subscriber}'s context, if any, current meanwhile. */
    static <T> T call(CoreSubscriber<?> subscriber, Supplier<T> call) {
        if (!MICROMETER || !JcclObservations.anyRegistered()) return call.get();
        return Scoped.call(subscriber, call);
    }

    /** Refers to Micrometer: loaded only where it is present. */
    private static final class Scoped {
        static <T> T call(CoreSubscriber<?> subscriber, Supplier<T> call) {
            Object parent = subscriber.currentContext().getOrDefault(ObservationThreadLocalAccessor.KEY, null);
            if (!(parent instanceof Observation observation)) return call.get();
            // Not Observation.scoped(..), which would mark the parent failed by a call that throws (a bad argument):
            // that error reaches the subscriber, who may well handle it.
            Observation.Scope scope = observation.openScope();
            try {
                return call.get();
            } finally {
                scope.close();
            }
        }
    }
}
