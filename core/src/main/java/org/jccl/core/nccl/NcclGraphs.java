package org.jccl.core.nccl;

import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.GraphCapture;

/**
 * CUDA (or HIP) graphs over the runtime's function table: capture in thread-local mode (only the launch thread that
 * captures is restricted; the event thread keeps polling other events), instantiate, launch, destroy.
 */
final class NcclGraphs implements GraphCapture {
    /** {@code cudaStreamCaptureModeThreadLocal} (and HIP's). */
    private static final int THREAD_LOCAL = 1;

    private final NativeLibrary lib;

    NcclGraphs(NativeLibrary lib) {
        this.lib = lib;
    }

    @Override
    public void begin(DriverStream stream) {
        lib.checkRuntime(NativeApi.jn_rt_capture_begin(lib.ctx, stream.handle(), THREAD_LOCAL), "cudaStreamBeginCapture");
    }

    @Override
    public long end(DriverStream stream) {
        long[] exec = new long[1];
        lib.checkRuntime(NativeApi.jn_rt_capture_end(lib.ctx, stream.handle(), exec), "cudaStreamEndCapture/cudaGraphInstantiate");
        return exec[0];
    }

    @Override
    public void launch(long graph, DriverStream stream) {
        lib.checkRuntime(NativeApi.jn_rt_graph_launch(lib.ctx, graph, stream.handle()), "cudaGraphLaunch");
    }

    @Override
    public void destroy(long graph) {
        lib.checkRuntime(NativeApi.jn_rt_graph_destroy(lib.ctx, graph), "cudaGraphExecDestroy");
    }
}
