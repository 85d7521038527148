package org.jccl.core;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A buffer registered with a communicator ({@code ncclCommRegister}) for zero-copy transfers. Keeps the buffer's
 * memory alive; {@link #close()} deregisters it in issue order, after the work already issued.
 */
public final class Registration implements AutoCloseable {
    private final Communicator communicator;
    private final Buffer buffer;
    private final long handle;
    private final AtomicBoolean closed = new AtomicBoolean();

    Registration(Communicator communicator, Buffer buffer, long handle) {
        this.communicator = communicator;
        this.buffer = buffer;
        this.handle = handle;
    }

    public Communicator communicator() {
        return communicator;
    }

    public Buffer buffer() {
        return buffer;
    }

    /** The library's registration handle. */
    public long handle() {
        return handle;
    }

    /** Deregisters; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) communicator.deregister(this);
    }

    @Override
    public String toString() {
        return "Registration[" + communicator.describe() + " " + buffer + (closed.get() ? ", closed" : "") + "]";
    }
}
