package org.jccl.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.engine.StreamQueue;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.thread.SerialWorker;
import org.jspecify.annotations.Nullable;

/**
 * An ordered queue of device work: a CUDA/HIP stream, or an ordered executor on the host backend. Each
 * communicator owns one; applications make more with {@link Backend#createStream} or wrap another library's with
 * {@link Backend#wrapStream}.
 *
 * <p>Copies, fills and markers return a {@link Work} completed by the event thread. On a communicator's own
 * stream ({@link Communicator#stream()}) they, event records and waits go through the communicator's launch queue,
 * so call order is stream order with its operations (a record waits until it is made, so that other streams can
 * wait for it at once); on other streams they are enqueued by the calling thread at call time. Order work across
 * streams with {@link Event}s and {@link #waitFor}.
 */
public final class Stream implements AutoCloseable {
    private final Backend backend;
    private final StreamQueue queue;
    private final @Nullable SerialWorker issuer;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** @param issuer the owning communicator's launch queue, or null for a stream of the application's */
    Stream(Backend backend, StreamQueue queue, @Nullable SerialWorker issuer) {
        this.backend = backend;
        this.queue = queue;
        this.issuer = issuer;
    }

    public int device() {
        return queue.device();
    }

    /** The native handle ({@code cudaStream_t} / {@code hipStream_t}), for other libraries. */
    public long handle() {
        return queue.driverStream().handle();
    }

    public Backend backend() {
        return backend;
    }

    /** Later work on this stream waits until {@code event} completes; does not block the caller. */
    public void waitFor(Event event) {
        Errors.requireArgument(event, "event");
        checkOpen();
        DriverEvent e = event.driverEvent();
        inOrder(() -> queue.driverStream().waitEvent(e));
    }

    /** Copies {@code bytes} from {@code src} to {@code dst} on this stream. */
    public Work copy(Buffer dst, Buffer src, long bytes) {
        Errors.requireArgument(dst, "dst");
        Errors.requireArgument(src, "src");
        checkOpen();
        dst.checkOpen();
        src.checkOpen();
        if (bytes < 0 || bytes > dst.byteSize() || bytes > src.byteSize()) {
            throw new InvalidArgumentException("copy of " + bytes + " bytes does not fit " + src + " -> " + dst);
        }
        MemoryBlock d = dst.block();
        MemoryBlock s = src.block();
        long dOff = dst.offset();
        long sOff = src.offset();
        Work work = new Work(-1, () -> "copy(" + bytes + " bytes)", null, new MemoryBlock[] {d, s}, 0);
        return IssuePath.onStream(queue, issuer, work,
                stream -> backend.driver().copyAsync(d, dOff, s, sOff, bytes, stream));
    }

    /** Sets {@code bytes} bytes of {@code dst} to {@code value} on this stream. */
    public Work fill(Buffer dst, int value, long bytes) {
        Errors.requireArgument(dst, "dst");
        checkOpen();
        dst.checkOpen();
        if (bytes < 0 || bytes > dst.byteSize()) {
            throw new InvalidArgumentException("fill of " + bytes + " bytes does not fit " + dst);
        }
        MemoryBlock d = dst.block();
        long off = dst.offset();
        Work work = new Work(-1, () -> "fill(" + bytes + " bytes)", null, new MemoryBlock[] {d}, 0);
        return IssuePath.onStream(queue, issuer, work,
                stream -> backend.driver().memsetAsync(d, off, value, bytes, stream));
    }

    /** A work that completes when everything enqueued on this stream so far has. */
    public Work marker() {
        checkOpen();
        Work work = new Work(-1, () -> "marker", null, new MemoryBlock[0], 0);
        return IssuePath.onStream(queue, issuer, work, stream -> { });
    }

    /**
     * Blocks until the stream is idle (on a communicator's stream: until everything issued before this call is
     * done). A convenience for scripts and tests; never call it on the event thread.
     */
    public void synchronize() {
        checkOpen();
        EventLoop.checkNotEventThread("Stream.synchronize()");
        if (issuer != null) marker().join();
        else queue.driverStream().synchronize();
    }

    /**
     * Destroys the stream if jccl created it (a wrapped stream is left to its owner). A communicator's own stream
     * is destroyed with the communicator: closing it here does nothing. Idempotent.
     */
    @Override
    public void close() {
        if (issuer == null) release();
    }

    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Records {@code event} at the end of this stream. On a communicator's stream the record is made by its launch
     * thread after everything issued before it, and this call waits for that (microseconds when the queue is idle),
     * so that another stream waiting for the event right after waits for all of it.
     */
    void record(DriverEvent event) {
        checkOpen();
        if (issuer == null || issuer.isWorkerThread()) {
            event.record(queue.driverStream());
            return;
        }
        EventLoop.checkNotEventThread("Event.record on a communicator's stream");
        CompletableFuture<Void> recorded = new CompletableFuture<>();
        boolean queued = issuer.submit(() -> {
            try {
                event.record(queue.driverStream());
                recorded.complete(null);
            } catch (Throwable t) {
                recorded.completeExceptionally(t);
            }
        });
        if (!queued) throw new InvalidUsageException("stream " + this + ": its communicator is closed");
        try {
            recorded.join();
        } catch (CompletionException e) {
            throw Errors.unwrap(e);
        }
    }

    /** Destroys the driver's stream once. */
    void release() {
        if (closed.compareAndSet(false, true)) queue.driverStream().destroy();
    }

    DriverStream driverStream() {
        return queue.driverStream();
    }

    StreamQueue queue() {
        return queue;
    }

    void checkOpen() {
        if (closed.get()) throw new InvalidUsageException("stream " + this + " is closed");
    }

    private void inOrder(Runnable enqueue) {
        if (issuer == null || issuer.isWorkerThread()) enqueue.run();
        else if (!issuer.submit(enqueue)) throw new InvalidUsageException("stream " + this + ": its communicator is closed");
    }

    @Override
    public String toString() {
        return "Stream[device " + device() + ", " + Long.toHexString(handle()) + "]";
    }
}
