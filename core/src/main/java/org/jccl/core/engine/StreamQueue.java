package org.jccl.core.engine;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jspecify.annotations.Nullable;

/**
 * The engine's side of one stream: the works whose completion events were recorded on it, oldest first. Streams
 * complete in order, so the event thread only ever polls the head. The works are linked through themselves
 * ({@link TrackedWork#nextOnStream()}): tracking one allocates nothing.
 */
public final class StreamQueue {
    private final DriverStream driverStream;
    private final Driver driver;
    private final EventPool events;
    /** The oldest work whose event was recorded here and not yet seen complete; only the event thread moves it on. */
    private volatile @Nullable TrackedWork oldest;
    /** The newest such work; guarded by this. */
    private @Nullable TrackedWork newest;
    /** Whether the event thread has this stream in its active set. */
    final AtomicBoolean active = new AtomicBoolean();
    /** The next stream activated before this one and not yet taken by the event thread ({@link EventLoop#activate}). */
    @Nullable StreamQueue nextActivation;

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
            if (newest == null) oldest = work;
            else newest.nextOnStream(work);
            newest = work;
        }
        EventLoop.get().activate(this);
    }

    /** The oldest work not yet seen complete, or null; event thread. */
    @Nullable TrackedWork oldest() {
        return oldest;
    }

    /** Takes {@code head}, which {@link #oldest()} returned, off the stream; event thread. */
    void removeOldest(TrackedWork head) {
        TrackedWork next = head.nextOnStream();
        if (next == null) {
            // Possibly the last: a recording may be appending to it right now, so decide under its lock.
            synchronized (this) {
                next = head.nextOnStream();
                if (next == null) newest = null;
                oldest = next;
            }
        } else {
            oldest = next;
        }
        head.nextOnStream(null);
    }

    /** Whether no recorded work is waiting to be seen complete. */
    boolean isEmpty() {
        return oldest == null;
    }
}
