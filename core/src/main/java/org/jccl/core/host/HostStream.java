package org.jccl.core.host;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.thread.Backoff;
import org.jccl.core.thread.SerialWorker;

/**
 * A host stream: an ordered executor ({@link SerialWorker}) that runs tasks in FIFO order. After a task it waits by
 * {@link Backoff#HOST_RANKS} (the next one usually follows within a round trip: yielding, not parked, it takes it
 * without a wake-up), then parks: an idle stream costs no CPU.
 */
final class HostStream implements DriverStream {
    private static final AtomicLong HANDLES = new AtomicLong(0x57000);
    private static final ConcurrentHashMap<Long, HostStream> LIVE = new ConcurrentHashMap<>();

    private final long handle = HANDLES.incrementAndGet();
    private final SerialWorker worker;

    HostStream() {
        worker = new SerialWorker("jccl-host-stream-" + Long.toHexString(handle), () -> { }, Backoff.HOST_RANKS);
        LIVE.put(handle, this);
    }

    /** The live stream with this handle, for {@code wrapStream}. */
    static HostStream byHandle(long handle) {
        HostStream s = LIVE.get(handle);
        if (s == null) throw new InvalidArgumentException("no live host stream has handle " + Long.toHexString(handle));
        return s;
    }

    /** The host stream behind a driver stream of this backend. */
    static HostStream of(DriverStream stream) {
        if (stream instanceof HostStream h) return h;
        if (stream instanceof Wrapped w) return w.target;
        throw new InvalidArgumentException(stream + " is not a host-backend stream");
    }

    /** Queues {@code task}; it runs after everything queued before it. */
    void enqueue(Runnable task) {
        if (!worker.submit(task)) throw new InvalidUsageException("host stream " + Long.toHexString(handle) + " is destroyed");
    }

    /** Whether the caller is this stream's thread. */
    boolean isStreamThread() {
        return worker.isWorkerThread();
    }

    @Override
    public int device() {
        return DriverConstants.HOST_DEVICE;
    }

    @Override
    public long handle() {
        return handle;
    }

    /** CUDA semantics: waits for the event's recording current now; a later re-record does not matter. */
    @Override
    public void waitEvent(DriverEvent event) {
        HostEvent e = HostEvent.of(event);
        long generation = e.recordedGeneration();
        enqueue(() -> e.awaitGeneration(generation));
    }

    @Override
    public void synchronize() {
        if (isStreamThread()) throw new InvalidUsageException("a host stream cannot synchronize on itself");
        CountDownLatch done = new CountDownLatch(1);
        enqueue(done::countDown);
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** Lets the queued tasks run, then ends the thread. */
    @Override
    public void destroy() {
        LIVE.remove(handle);
        worker.stop();
    }

    @Override
    public String toString() {
        return "HostStream[" + Long.toHexString(handle) + "]";
    }

    /** {@code wrapStream}: the same executor, but destroying the wrapper leaves the stream to its owner. */
    static final class Wrapped implements DriverStream {
        private final HostStream target;

        Wrapped(HostStream target) {
            this.target = target;
        }

        @Override
        public int device() {
            return target.device();
        }

        @Override
        public long handle() {
            return target.handle();
        }

        @Override
        public void waitEvent(DriverEvent event) {
            target.waitEvent(event);
        }

        @Override
        public void synchronize() {
            target.synchronize();
        }

        @Override
        public void destroy() {
            // Not ours to destroy.
        }
    }
}
