package org.jccl.core.nccl;

import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;

/** A {@code cudaStream_t}/{@code hipStream_t}: created non-blocking by the driver, or a wrapped foreign one. */
final class NcclStream implements DriverStream {
    private final NativeLibrary lib;
    private final int device;
    private final long handle;
    private final boolean owned;
    private boolean destroyed;

    NcclStream(NativeLibrary lib, int device, long handle, boolean owned) {
        this.lib = lib;
        this.device = device;
        this.handle = handle;
        this.owned = owned;
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public void waitEvent(DriverEvent event) {
        lib.checkRuntime(NativeApi.jn_rt_stream_wait_event(lib.ctx, handle, event.handle()), "cudaStreamWaitEvent");
    }

    @Override
    public void synchronize() {
        lib.checkRuntime(NativeApi.jn_rt_stream_synchronize(lib.ctx, handle), "cudaStreamSynchronize");
    }

    @Override
    public synchronized void destroy() {
        if (destroyed || !owned) return;
        destroyed = true;
        lib.checkRuntime(NativeApi.jn_rt_stream_destroy(lib.ctx, handle), "cudaStreamDestroy");
    }
}
