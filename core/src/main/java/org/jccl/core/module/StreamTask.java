package org.jccl.core.module;

import org.jccl.core.spi.DriverStream;

/** What a module's operation enqueues on its communicator's stream, run on the communicator's launch thread. */
@FunctionalInterface
public interface StreamTask {
    void enqueue(DriverStream stream);
}
