package org.jccl.core.host;

import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;

/**
 * A host event: each {@link #record} starts a new generation and queues a task on the stream that completes it
 * and wakes the engine's event thread. Events are pooled and re-recorded, so waits and queries always name the
 * generation they mean.
 */
final class HostEvent implements DriverEvent {
    private static final AtomicLong HANDLES = new AtomicLong(0xE0000);

    private final long handle = HANDLES.incrementAndGet();
    private final boolean timing;
    private final Runnable wake;
    private final AtomicLong recorded = new AtomicLong();
    private volatile long completed;
    private volatile long completedAtNanos;
    private int waiters;

    HostEvent(boolean timing, Runnable wake) {
        this.timing = timing;
        this.wake = wake;
    }

    static HostEvent of(DriverEvent event) {
        if (event instanceof HostEvent h) return h;
        throw new InvalidArgumentException(event + " is not a host-backend event");
    }

    long recordedGeneration() {
        return recorded.get();
    }

    @Override
    public int device() {
        return DriverConstants.HOST_DEVICE;
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public void record(DriverStream stream) {
        HostStream s = HostStream.of(stream);
        long generation = recorded.incrementAndGet();
        s.enqueue(() -> complete(generation));
    }

    private void complete(long generation) {
        if (timing) completedAtNanos = System.nanoTime();
        synchronized (this) {
            if (generation > completed) completed = generation;
            if (waiters > 0) notifyAll();
        }
        wake.run();
    }

    @Override
    public int query() {
        return completed >= recorded.get() ? DriverConstants.EVENT_DONE : DriverConstants.EVENT_PENDING;
    }

    /** Blocks until {@code generation} has completed (a stream task waiting for another stream). */
    void awaitGeneration(long generation) {
        if (completed >= generation) return;
        boolean interrupted = false;
        synchronized (this) {
            waiters++;
            try {
                while (completed < generation) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                waiters--;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    @Override
    public void synchronize() {
        awaitGeneration(recorded.get());
    }

    @Override
    public float elapsedMillisSince(DriverEvent start) {
        HostEvent s = of(start);
        if (!timing || !s.timing) throw new InvalidUsageException("both events need timing enabled");
        if (query() != DriverConstants.EVENT_DONE || s.query() != DriverConstants.EVENT_DONE || s.recorded.get() == 0
                || recorded.get() == 0) {
            throw new InvalidUsageException("both events must have been recorded and completed");
        }
        return (completedAtNanos - s.completedAtNanos) / 1e6f;
    }

    @Override
    public void destroy() {
        // Nothing native to release.
    }
}
