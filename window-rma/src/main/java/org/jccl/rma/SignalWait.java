package org.jccl.rma;

/**
 * One condition of {@link OneSided#waitSignal}: {@code count} more signals from {@code peer} on
 * ({@code signalIndex}, {@code context}) than earlier waits consumed ({@code ncclWaitSignalDesc_t}). Signals are
 * counted per (peer, signal index, context) on the receiving rank; each wait consumes what it waited for.
 */
public record SignalWait(int peer, int count, int signalIndex, int context) {
    /** {@code count} signals from {@code peer} on signal index 0 and context 0. */
    public static SignalWait of(int peer, int count) {
        return new SignalWait(peer, count, 0, 0);
    }
}
