package org.jccl.core.spi;

/**
 * What a communicator's library accepts for windows and one-sided operations, so that callers can check arguments
 * before anything is enqueued.
 *
 * @param signalIndices           signal indices are {@code 0 .. signalIndices-1} (NCCL 2.29: only 0)
 * @param contexts                contexts are {@code 0 .. contexts-1} (NCCL 2.29: only 0)
 * @param sourceInSymmetricWindow whether a put's local buffer must lie inside a collective-symmetric window
 * @param windowFlags             the {@code NCCL_WIN_*} flags the library knows, as a mask
 * @param windowAlignment         a window's offset into its allocation must be a multiple of this
 * @param communicationMemory     whether windows must be memory from {@code ncclMemAlloc}
 *                                ({@link MemoryKind#COMMUNICATION})
 */
public record OneSidedLimits(int signalIndices, int contexts, boolean sourceInSymmetricWindow, int windowFlags,
                             long windowAlignment, boolean communicationMemory) {
}
