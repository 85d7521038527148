package org.jccl.examples.inference;

import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Work;
import org.jccl.device.DeviceApi;
import org.jccl.device.Kernel;
import org.jccl.device.KernelArgs;
import org.jccl.device.KernelCompiler;
import org.jccl.device.KernelLaunch;
import org.jccl.device.KernelLibrary;
import org.jccl.device.KernelSource;
import org.jccl.device.LaunchConfig;

/**
 * A rank's shard of {@link MlpModel} as CUDA kernels, compiled at run time (NVRTC, cached per architecture) and
 * launched through jccl's device API on the communicator's stream, in call order with its collectives: on GPUs a
 * batch's step stays on the device from the broadcast of its inputs to the gather of its outputs. The kernels compute
 * what {@link MlpModel#partialBlock} and {@link MlpModel#headPart} compute, one thread block per sample.
 */
final class MlpKernels implements AutoCloseable {
    private static final int THREADS = 256;
    private static final KernelSource SOURCE = KernelSource.of("mlp.cu", """
            extern "C" __global__ void mlp_block(const float* x, const float* a, const float* b, float* y,
                                                 int in, int hidden) {
              extern __shared__ float h[];
              const int s = blockIdx.x;
              for (int k = threadIdx.x; k < hidden; k += blockDim.x) {
                float sum = 0.f;
                for (int i = 0; i < in; i++) sum += x[s * in + i] * a[i * hidden + k];
                h[k] = fmaxf(sum, 0.f);
              }
              __syncthreads();
              for (int j = threadIdx.x; j < in; j += blockDim.x) {
                float sum = 0.f;
                for (int k = 0; k < hidden; k++) sum += h[k] * b[k * in + j];
                y[s * in + j] = sum;
              }
            }
            extern "C" __global__ void mlp_head(const float* y, const float* c, float* z, int in, int outPart) {
              const int s = blockIdx.x;
              for (int o = threadIdx.x; o < outPart; o += blockDim.x) {
                float sum = 0.f;
                for (int j = 0; j < in; j++) sum += y[s * in + j] * c[j * outPart + o];
                z[s * outPart + o] = sum;
              }
            }
            """);

    private final DeviceApi api;
    private final KernelLibrary library;
    private final Kernel block;
    private final Kernel head;
    private final Buffer a;
    private final Buffer b;
    private final Buffer c;
    private final int hiddenPart;
    private final int outPart;

    /** Compiles and loads the kernels for {@code comm}'s device and copies {@code shard}'s weights there. */
    MlpKernels(Backend backend, Communicator comm, MlpModel shard) {
        this.api = DeviceApi.of(comm);
        this.library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(SOURCE, comm.device()));
        this.block = library.kernel("mlp_block");
        this.head = library.kernel("mlp_head");
        this.hiddenPart = shard.hiddenPart();
        this.outPart = shard.outPart();
        this.a = upload(backend, comm.device(), shard.shardA());
        this.b = upload(backend, comm.device(), shard.shardB());
        this.c = upload(backend, comm.device(), shard.shardC());
    }

    private static Buffer upload(Backend backend, int device, float[] values) {
        Buffer buffer = backend.allocate(device, 4L * values.length);
        buffer.write(0, values);
        return buffer;
    }

    /** {@code y = relu(x·A_r)·B_r} for {@code batch} samples, issued now on the communicator's stream. */
    Work block(Buffer x, Buffer y, int batch) {
        return api.launch(block, blockConfig(batch), blockArgs(x, y));
    }

    /** {@link #block} prepared for a step. */
    KernelLaunch prepareBlock(Buffer x, Buffer y, int batch) {
        return api.prepare(block, blockConfig(batch), blockArgs(x, y));
    }

    /** {@code z = y·C_r} for {@code batch} samples, issued now on the communicator's stream. */
    Work head(Buffer y, Buffer z, int batch) {
        return api.launch(head, LaunchConfig.of(batch, THREADS), headArgs(y, z));
    }

    /** {@link #head} prepared for a step. */
    KernelLaunch prepareHead(Buffer y, Buffer z, int batch) {
        return api.prepare(head, LaunchConfig.of(batch, THREADS), headArgs(y, z));
    }

    private LaunchConfig blockConfig(int batch) {
        return LaunchConfig.of(batch, THREADS).withSharedBytes(4 * hiddenPart);
    }

    private KernelArgs blockArgs(Buffer x, Buffer y) {
        return KernelArgs.create().pointer(x).pointer(a).pointer(b).pointer(y).int32(MlpModel.IN).int32(hiddenPart);
    }

    private KernelArgs headArgs(Buffer y, Buffer z) {
        return KernelArgs.create().pointer(y).pointer(c).pointer(z).int32(MlpModel.IN).int32(outPart);
    }

    @Override
    public void close() {
        a.close();
        b.close();
        c.close();
        library.close();
    }
}
