package org.jccl.core.spi;

/** A backend's stream: work enqueued on it runs in enqueue order. */
public interface DriverStream {
    int device();

    /** The native handle ({@code cudaStream_t}); 0 for the default stream; an identity for host streams. */
    long handle();

    /** Makes later work on this stream wait until {@code event} has completed; never blocks the caller. */
    void waitEvent(DriverEvent event);

    /** Blocks until all work on the stream has completed. For users' blocking conveniences only. */
    void synchronize();

    /** Releases the stream if this driver created it; a wrapped foreign stream is left alone. */
    void destroy();
}
