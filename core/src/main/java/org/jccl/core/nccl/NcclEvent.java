package org.jccl.core.nccl;

import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;

/** A {@code cudaEvent_t}/{@code hipEvent_t}. */
final class NcclEvent implements DriverEvent {
    /** {@code cudaErrorNotReady} and {@code hipErrorNotReady}. */
    static final int NOT_READY = 600;

    private final NativeLibrary lib;
    private final int device;
    private final long handle;
    private final boolean timing;
    private boolean destroyed;

    NcclEvent(NativeLibrary lib, int device, long handle, boolean timing) {
        this.lib = lib;
        this.device = device;
        this.handle = handle;
        this.timing = timing;
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
    public void record(DriverStream stream) {
        lib.checkRuntime(NativeApi.jn_rt_event_record(lib.ctx, handle, stream.handle()), "cudaEventRecord");
    }

    @Override
    public int query() {
        int code = NativeApi.jn_rt_event_query(lib.ctx, handle);
        if (code == NOT_READY) return DriverConstants.EVENT_PENDING;
        lib.checkRuntime(code, "cudaEventQuery");
        return DriverConstants.EVENT_DONE;
    }

    @Override
    public void synchronize() {
        lib.checkRuntime(NativeApi.jn_rt_event_synchronize(lib.ctx, handle), "cudaEventSynchronize");
    }

    @Override
    public float elapsedMillisSince(DriverEvent start) {
        if (!timing || !(start instanceof NcclEvent s) || !s.timing) {
            throw new InvalidUsageException("elapsed time needs two events created with timing enabled");
        }
        float[] ms = new float[1];
        lib.checkRuntime(NativeApi.jn_rt_event_elapsed(lib.ctx, ms, start.handle(), handle), "cudaEventElapsedTime");
        return ms[0];
    }

    @Override
    public synchronized void destroy() {
        if (destroyed) return;
        destroyed = true;
        lib.checkRuntime(NativeApi.jn_rt_event_destroy(lib.ctx, handle), "cudaEventDestroy");
    }
}
