package org.jccl.core.spi;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A backend's kernels: code images loaded once for every device, kernels found in them by name and launched on a
 * communicator's stream, and the run-time compiler. Obtained from {@link Driver#kernels()}; thread-safe, except that
 * {@link #launch} runs on the launch thread of the stream's communicator (its device is current there).
 */
public interface KernelRuntime {
    /** The loaded driver API and compiler, e.g. {@code libcuda.so.1 (driver 13.0), NVRTC 13.0}. */
    String describe();

    /**
     * Loads a PTX (NUL-terminated), cubin or fatbin image; returns its handle.
     *
     * @throws org.jccl.core.error.InvalidArgumentException if the driver rejects the image
     */
    long loadImage(byte[] image);

    /** Unloads an image; no launch of its kernels may still be pending. */
    void unloadImage(long image);

    /**
     * The kernel {@code name} of {@code image} (an {@code extern "C"} name or a mangled one).
     *
     * @throws org.jccl.core.error.InvalidArgumentException if the image has no such kernel
     */
    long kernel(long image, String name);

    /**
     * The byte size of each of the kernel's parameters, in order, or null where the driver cannot tell (before
     * CUDA 12.4): then arguments are passed unchecked.
     */
    long @Nullable [] parameterSizes(long kernel);

    /** The most threads a block of {@code kernel} may have on {@code device}. */
    int maxThreadsPerBlock(long kernel, int device);

    /** The most dynamic shared memory a block of {@code kernel} may use on {@code device} without opting in to more. */
    int maxDynamicSharedBytes(long kernel, int device);

    /**
     * Launches {@code kernel} on {@code stream}; {@code dims} = grid x, y, z then block x, y, z, parameter i being the
     * bytes of {@code arguments} from {@code offsets[i]}. Called on the stream's communicator's launch thread.
     */
    void launch(long kernel, int[] dims, int sharedBytes, DriverStream stream, byte[] arguments, int[] offsets);

    /** Whether source can be compiled here (NVRTC loaded); {@link #compilerProblem()} says why not. */
    boolean canCompile();

    /** Why {@link #canCompile()} is false: the files tried and the loader's reasons; null when it is true. */
    @Nullable String compilerProblem();

    /** The compiler's version as major * 1000 + minor * 10, e.g. 13000; 0 when none is loaded. */
    int compilerVersion();

    /**
     * Compiles CUDA C++ {@code source} (named {@code name} in messages) with in-memory {@code headers} (include name →
     * contents) and {@code options}; never throws for a compile error, which comes back in the result with its log.
     */
    CompiledCode compile(String source, String name, Map<String, String> headers, List<String> options);
}
