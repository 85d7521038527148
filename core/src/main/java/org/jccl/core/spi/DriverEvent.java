package org.jccl.core.spi;

/** A backend's event: recorded on a stream, it completes when all work enqueued before it has. */
public interface DriverEvent {
    int device();

    /** The native handle ({@code cudaEvent_t}), or an identity for host events. */
    long handle();

    /** Records the event at the current end of {@code stream}; resets it first if it was recorded before. */
    void record(DriverStream stream);

    /** {@link DriverConstants#EVENT_DONE}, {@link DriverConstants#EVENT_PENDING}, or throws the runtime's error. */
    int query();

    /** Blocks until the event has completed. For users' blocking conveniences only. */
    void synchronize();

    /** Milliseconds from {@code start} to this event; both must have been created with timing enabled. */
    float elapsedMillisSince(DriverEvent start);

    void destroy();
}
