package org.jccl.reactive.internal;

import reactor.core.scheduler.NonBlocking;

/**
 * jccl's event thread as Reactor's {@link NonBlocking}: {@code block()} called from a callback that runs on it
 * throws at once instead of stalling every operation of the process.
 */
final class NonBlockingEventThread extends Thread implements NonBlocking {
    NonBlockingEventThread(Runnable body, String name) {
        super(body, name);
    }
}
