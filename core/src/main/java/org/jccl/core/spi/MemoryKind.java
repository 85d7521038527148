package org.jccl.core.spi;

/** Where a block of memory lives and who allocated it. */
public enum MemoryKind {
    /** GPU memory from the runtime ({@code cudaMalloc}); host memory for the host backend. */
    DEVICE,
    /** Page-locked host memory ({@code cudaHostAlloc}), usable by asynchronous copies. */
    PINNED_HOST,
    /** Memory from {@code ncclMemAlloc}: registration-friendly, needed by windows and NVLS. */
    COMMUNICATION,
    /**
     * Memory another library allocated and jccl wraps without copying ({@code Backend.wrap}, DLPack): device memory on
     * GPU backends, host memory on the host backend. jccl never frees it; its owner is told when the last use ended.
     */
    FOREIGN
}
