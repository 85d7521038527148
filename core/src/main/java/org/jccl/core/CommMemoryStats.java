package org.jccl.core;

/**
 * A communicator's GPU memory as the library tracks it ({@code ncclCommMemStats}).
 *
 * @param suspendableBytes memory {@link Communicator#suspend} can release
 * @param suspended        whether that memory is released now
 * @param persistentBytes  memory that stays while the communicator lives
 * @param totalBytes       all memory the library tracks for the communicator
 */
public record CommMemoryStats(long suspendableBytes, boolean suspended, long persistentBytes, long totalBytes) {
}
