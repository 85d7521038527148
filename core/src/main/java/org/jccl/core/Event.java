package org.jccl.core;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.Errors;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;

/**
 * A point in a stream: recorded on one stream, waited for by another ({@link Stream#waitFor}), queried, or used to
 * time work. For completion as a future, use {@link Stream#marker()}.
 */
public final class Event implements AutoCloseable {
    private final DriverEvent driverEvent;
    private final AtomicBoolean closed = new AtomicBoolean();

    Event(DriverEvent driverEvent) {
        this.driverEvent = driverEvent;
    }

    /** Records this event at the current end of {@code stream}. */
    public Event record(Stream stream) {
        Errors.requireArgument(stream, "stream");
        stream.record(driverEvent);
        return this;
    }

    /** Whether all work before the recording has completed. Never blocks. */
    public boolean isDone() {
        return driverEvent.query() == DriverConstants.EVENT_DONE;
    }

    /** Blocks until done. A convenience for scripts and tests; never call it on the event thread. */
    public void synchronize() {
        driverEvent.synchronize();
    }

    /** Milliseconds between {@code start} and this event; both created with timing. */
    public float elapsedMillisSince(Event start) {
        return driverEvent.elapsedMillisSince(start.driverEvent);
    }

    public long handle() {
        return driverEvent.handle();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) driverEvent.destroy();
    }

    DriverEvent driverEvent() {
        return driverEvent;
    }

    @Override
    public String toString() {
        return "Event[" + driverEvent.getClass().getSimpleName() + (closed.get() ? ", closed" : "") + "]";
    }
}
