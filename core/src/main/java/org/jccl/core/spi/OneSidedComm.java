package org.jccl.core.spi;

import org.jccl.core.DataType;

/**
 * Memory windows and one-sided operations of a communicator, a capability a driver offers or not
 * ({@link DriverComm#capability}): {@code ncclCommWindowRegister} … {@code ncclWaitSignal} on NCCL, their pure-Java
 * counterparts on the host backend. Called by the {@code window-rma} module, on the communicator's launch thread,
 * after it checked every argument (ranges, alignment, flags, signal indices) against {@link #oneSidedLimits()}.
 * Where the loaded library lacks a function the call throws
 * {@link org.jccl.core.error.UnsupportedFeatureException} naming it.
 */
public interface OneSidedComm {
    /** What this communicator accepts for windows and one-sided operations. */
    OneSidedLimits oneSidedLimits();

    /**
     * {@code ncclCommWindowRegister}, collective: registers {@code bytes} of {@code block} from {@code offset} as a
     * window with {@code flags} ({@code DriverConstants.WIN_*}); returns the window's handle ({@code ncclWindow_t}).
     */
    long windowRegister(MemoryBlock block, long offset, long bytes, int flags);

    /** {@code ncclCommWindowDeregister}, collective; no operation referencing the window may still be pending. */
    void windowDeregister(long window);

    /** {@code ncclWinGetUserPtr}: the address the window was registered at. */
    long windowUserPointer(long window);

    /**
     * {@code ncclPutSignal} on {@code stream}: writes {@code count} elements from {@code source} into {@code peer}'s
     * part of {@code window} at {@code peerOffset} bytes, then signals ({@code signalIndex}, {@code context}) there.
     * Possibly inside a group.
     */
    void putSignal(MemoryRef source, long count, DataType type, int peer, long window, long peerOffset,
                   int signalIndex, int context, DriverStream stream);

    /** {@code ncclSignal} on {@code stream}: a signal to {@code peer} without data. */
    void signal(int peer, int signalIndex, int context, DriverStream stream);

    /** {@code ncclWaitSignal} on {@code stream}: the stream waits until every descriptor's signals have arrived. */
    void waitSignal(WaitDescriptor[] waits, DriverStream stream);
}
