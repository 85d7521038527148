package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/** Memory from {@code cudaMalloc}, {@code cudaHostAlloc} or {@code ncclMemAlloc}, freed by its matching call. */
final class NcclMemory extends MemoryBlock {
    private final NativeLibrary lib;
    private final @Nullable ByteBuffer hostView;

    NcclMemory(NativeLibrary lib, long address, long size, int device, MemoryKind kind) {
        super(address, size, device, kind);
        this.lib = lib;
        this.hostView = kind == MemoryKind.PINNED_HOST ? view(address, size) : null;
    }

    /** A byte buffer over native memory the CPU may touch (pinned host memory). */
    static ByteBuffer view(long hostAddress, long size) {
        return NativeMemory.view(hostAddress, size);
    }

    @Override
    public @Nullable ByteBuffer hostView() {
        return hostView == null ? null : hostView.duplicate().order(ByteOrder.nativeOrder());
    }

    @Override
    protected void free() {
        switch (kind()) {
            case DEVICE -> lib.checkRuntime(NativeApi.jn_rt_free(lib.ctx, address()), "cudaFree");
            case PINNED_HOST -> lib.checkRuntime(NativeApi.jn_rt_free_host(lib.ctx, address()), "cudaFreeHost");
            case COMMUNICATION -> lib.check(NativeApi.jn_mem_free(lib.ctx, address()), "ncclMemFree", 0);
        }
    }
}
