package org.jccl.core.spi;

/**
 * One entry of {@code ncclWaitSignal}'s descriptor array ({@code ncclWaitSignalDesc_t}): wait until {@code count}
 * more signals from {@code peer} on ({@code signalIndex}, {@code context}) have arrived than earlier waits consumed.
 * Signals are counted per (peer, signal index, context); each wait consumes what it waited for.
 */
public record WaitDescriptor(int count, int peer, int signalIndex, int context) {
}
