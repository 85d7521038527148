package org.jccl.core;

import java.util.ArrayDeque;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;

/**
 * The per-backend half of the engine: records the completion event of each work on its stream, hands the work to
 * the event thread, and recycles events (one per work in flight, pooled per device so the hot path allocates none).
 */
final class Engine {
    private final Driver driver;
    private final EventLoop loop;
    private ArrayDeque<DriverEvent>[] pools;

    @SuppressWarnings("unchecked")
    Engine(Driver driver) {
        this.driver = driver;
        this.loop = EventLoop.get();
        this.pools = new ArrayDeque[0];
        driver.onEventCompleted(loop::wake);
    }

    EventLoop loop() {
        return loop;
    }

    /** Records {@code work}'s event at the end of {@code stream} and queues the work for the event thread. */
    void recordAndTrack(Work work, Stream stream) {
        DriverEvent event = takeEvent(stream.device());
        // Record and enqueue together, so the stream's queue is in recording order even with several issuers.
        synchronized (stream) {
            event.record(stream.driverStream());
            work.launched(event, stream);
            stream.pending.offer(work);
        }
        loop.activate(stream);
    }

    /** An event for {@code device} (timing disabled: cheaper to record and query). */
    synchronized DriverEvent takeEvent(int device) {
        ArrayDeque<DriverEvent> pool = pool(device);
        DriverEvent e = pool.pollLast();
        return e != null ? e : driver.createEvent(device, false);
    }

    /** Returns a completed work's event to its pool. */
    synchronized void recycle(DriverEvent event) {
        pool(event.device()).addLast(event);
    }

    @SuppressWarnings("unchecked")
    private ArrayDeque<DriverEvent> pool(int device) {
        int slot = device + 1; // the host device is -1
        if (slot >= pools.length) {
            ArrayDeque<DriverEvent>[] grown = new ArrayDeque[slot + 1];
            System.arraycopy(pools, 0, grown, 0, pools.length);
            for (int i = pools.length; i < grown.length; i++) grown[i] = new ArrayDeque<>();
            pools = grown;
        }
        return pools[slot];
    }
}
