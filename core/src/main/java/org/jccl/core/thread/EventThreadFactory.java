package org.jccl.core.thread;

/**
 * Makes the event thread. Found with {@link java.util.ServiceLoader}: the reactive module provides one whose
 * thread is Reactor's {@code NonBlocking}, so {@code block()} there fails fast. Without one, a plain daemon
 * thread is used.
 */
public interface EventThreadFactory {
    Thread newThread(Runnable body, String name);
}
