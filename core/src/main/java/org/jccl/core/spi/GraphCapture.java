package org.jccl.core.spi;

/**
 * Stream capture into graphs, a capability a driver offers or not ({@link Driver#graphs()}): what is enqueued on a
 * stream between {@link #begin} and {@link #end} is recorded instead of run, and the instantiated graph is launched as
 * one unit afterwards (CUDA graphs, HIP graphs). Called on the launch thread of the stream's communicator; only that
 * thread's calls are restricted while it captures.
 */
public interface GraphCapture {
    /** Starts capturing what the calling thread enqueues on {@code stream}. */
    void begin(DriverStream stream);

    /**
     * Ends the capture and instantiates what was captured; returns the executable graph's handle. Always ends the
     * capture, so the stream runs work again, even when it then throws.
     */
    long end(DriverStream stream);

    /** Launches the executable graph on {@code stream}: one launch for everything captured. */
    void launch(long graph, DriverStream stream);

    /** Frees the executable graph; no launch of it may still be pending. */
    void destroy(long graph);
}
