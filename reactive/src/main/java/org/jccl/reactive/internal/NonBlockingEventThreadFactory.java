package org.jccl.reactive.internal;

import java.util.Objects;
import org.jccl.core.thread.EventThreadFactory;

/**
 * Makes core's event thread a Reactor {@link reactor.core.scheduler.NonBlocking} thread. Core finds this factory
 * with {@link java.util.ServiceLoader} whenever this module is on the class path; applications do not call it.
 */
public final class NonBlockingEventThreadFactory implements EventThreadFactory {
    /** Made by {@link java.util.ServiceLoader}. */
    public NonBlockingEventThreadFactory() {
    }

    /** A new, unstarted {@link reactor.core.scheduler.NonBlocking} thread running {@code body}. */
    @Override
    public Thread newThread(Runnable body, String name) {
        return new NonBlockingEventThread(Objects.requireNonNull(body, "body"), Objects.requireNonNull(name, "name"));
    }
}
