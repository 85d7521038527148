package org.jccl.core.engine;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;

/**
 * The engine's side of one stream: the works whose completion events were recorded on it, oldest first. Streams
 * complete in order, so the event thread only ever polls the head.
 */
public final class StreamQueue {
    private final DriverStream driverStream;
    private final Driver driver;
    private final EventPool events;
    /** Works whose events were recorded here and have not been seen complete, oldest first. */
    final ConcurrentLinkedQueue<TrackedWork> pending = new ConcurrentLinkedQueue<>();
    /** Whether the event thread has this stream in its active set. */
    final AtomicBoolean active = new AtomicBoolean();

    public StreamQueue(DriverStream driverStream, Driver driver, EventPool events) {
        this.driverStream = driverStream;
        this.driver = driver;
        this.events = events;
    }

    public DriverStream driverStream() {
        return driverStream;
    }

    public int device() {
        return driverStream.device();
    }

    Driver driver() {
        return driver;
    }

    EventPool events() {
        return events;
    }

    /**
     * Records {@code work}'s completion event at the current end of the stream and hands the work to the event
     * thread. Call on the thread that enqueued the work's operations, right after them.
     */
    public void recordAndTrack(TrackedWork work) {
        DriverEvent event = events.take(device());
        // Record and enqueue together, so the queue is in recording order even with several issuers.
        synchronized (this) {
            event.record(driverStream);
            work.launched(event, this);
            pending.offer(work);
        }
        EventLoop.get().activate(this);
    }
}
