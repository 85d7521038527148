package org.jccl.core;

import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;

/**
 * An ordered queue of device work: a CUDA/HIP stream, or an ordered executor on the host backend. Each
 * communicator owns one; applications make more with {@link Backend#createStream} or wrap another library's with
 * {@link Backend#wrapStream}.
 *
 * <p>Copies and fills are enqueued from the calling thread at call time and return a {@link Work} completed by the
 * event thread. Order them against a communicator's operations with {@link Event}s and {@link #waitFor}.
 */
public final class Stream implements AutoCloseable {
    private final Backend backend;
    private final DriverStream driverStream;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Works whose events were recorded on this stream and have not been seen complete, oldest first. */
    final ConcurrentLinkedQueue<Work> pending = new ConcurrentLinkedQueue<>();
    /** Whether the event thread has this stream in its active set. */
    final AtomicBoolean active = new AtomicBoolean();

    Stream(Backend backend, DriverStream driverStream) {
        this.backend = backend;
        this.driverStream = driverStream;
    }

    public int device() {
        return driverStream.device();
    }

    /** The native handle ({@code cudaStream_t} / {@code hipStream_t}), for other libraries. */
    public long handle() {
        return driverStream.handle();
    }

    public Backend backend() {
        return backend;
    }

    /** Later work on this stream waits until {@code event} completes; does not block the caller. */
    public void waitFor(Event event) {
        Objects.requireNonNull(event, "event");
        checkOpen();
        driverStream.waitEvent(event.driverEvent());
    }

    /** Copies {@code bytes} from {@code src} to {@code dst} on this stream. */
    public Work copy(Buffer dst, Buffer src, long bytes) {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(src, "src");
        checkOpen();
        dst.checkOpen();
        src.checkOpen();
        if (bytes < 0 || bytes > dst.byteSize() || bytes > src.byteSize()) {
            throw new InvalidArgumentException("copy of " + bytes + " bytes does not fit " + src + " -> " + dst);
        }
        Work work = new Work(-1, "copy(" + bytes + " bytes)", null,
                new MemoryBlock[] {dst.memoryBlock(), src.memoryBlock()}, 0);
        backend.driver().copyAsync(dst.memoryBlock(), dst.offset(), src.memoryBlock(), src.offset(), bytes, driverStream);
        backend.engine().recordAndTrack(work, this);
        return work;
    }

    /** Sets {@code bytes} bytes of {@code dst} to {@code value} on this stream. */
    public Work fill(Buffer dst, int value, long bytes) {
        Objects.requireNonNull(dst, "dst");
        checkOpen();
        dst.checkOpen();
        if (bytes < 0 || bytes > dst.byteSize()) {
            throw new InvalidArgumentException("fill of " + bytes + " bytes does not fit " + dst);
        }
        Work work = new Work(-1, "fill(" + bytes + " bytes)", null, new MemoryBlock[] {dst.memoryBlock()}, 0);
        backend.driver().memsetAsync(dst.memoryBlock(), dst.offset(), value, bytes, driverStream);
        backend.engine().recordAndTrack(work, this);
        return work;
    }

    /** A work that completes when everything enqueued on this stream so far has. */
    public Work marker() {
        checkOpen();
        Work work = new Work(-1, "marker", null, new MemoryBlock[0], 0);
        backend.engine().recordAndTrack(work, this);
        return work;
    }

    /** Blocks until the stream is idle. A convenience for scripts and tests; never call it on the event thread. */
    public void synchronize() {
        checkOpen();
        driverStream.synchronize();
    }

    /** Destroys the stream if jccl created it (a wrapped stream is left to its owner). Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) driverStream.destroy();
    }

    public boolean isClosed() {
        return closed.get();
    }

    DriverStream driverStream() {
        return driverStream;
    }

    void checkOpen() {
        if (closed.get()) throw new org.jccl.core.error.InvalidUsageException("stream " + this + " is closed");
    }

    @Override
    public String toString() {
        return "Stream[device " + device() + ", " + Long.toHexString(handle()) + "]";
    }
}
