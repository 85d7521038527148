package org.jccl.core.nccl;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.CompiledCode;
import org.jccl.core.spi.DriverStream;
import org.jspecify.annotations.Nullable;

/**
 * Kernels on HIP: a module belongs to the device current when it is loaded ({@code hipModuleLoadData}), so an image
 * is kept and loaded on each device at its first launch there, on that communicator's launch thread, and its
 * functions found there ({@code hipModuleGetFunction}). HIP cannot tell parameter sizes (arguments go unchecked) and a
 * function's limits are known once it was loaded on the device. hipRTC compiles to a code object. Contract-tested
 * against stub libraries only: jccl has not run on AMD hardware.
 */
final class HipKernels extends NcclKernels {
    /** AMD GPUs run at most 1024 threads per block; the real limit is asked once the function is loaded there. */
    private static final int MAX_THREADS = 1024;

    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, byte[]> images = new ConcurrentHashMap<>();
    /** (image, device) → module. */
    private final Map<String, Long> modules = new ConcurrentHashMap<>();
    /** kernel id → (image, name). */
    private final Map<Long, KernelName> kernels = new ConcurrentHashMap<>();
    /** (kernel, device) → function. */
    private final Map<String, Long> functions = new ConcurrentHashMap<>();

    private record KernelName(long image, String name) {
    }

    HipKernels(long k) {
        super(k);
    }

    static HipKernels open(String driverCandidates, String rtcCandidates) {
        return new HipKernels(openNative(true, driverCandidates, rtcCandidates));
    }

    @Override
    public long loadImage(byte[] image) {
        long id = ids.incrementAndGet();
        images.put(id, image.clone());
        return id;
    }

    @Override
    public void unloadImage(long image) {
        images.remove(image);
        kernels.entrySet().removeIf(e -> e.getValue().image() == image);
        modules.entrySet().removeIf(e -> {
            if (!e.getKey().startsWith(image + "/")) return false;
            check(NativeApi.jk_library_unload(k, e.getValue()), "hipModuleUnload");
            return true;
        });
    }

    /** The name is checked where the module is first loaded, at the first launch on a device. */
    @Override
    public long kernel(long image, String name) {
        if (!images.containsKey(image)) throw new InvalidArgumentException("no loaded image " + image);
        long id = ids.incrementAndGet();
        kernels.put(id, new KernelName(image, name));
        return id;
    }

    @Override
    public long @Nullable [] parameterSizes(long kernel) {
        return null;
    }

    @Override
    public int maxThreadsPerBlock(long kernel, int device) {
        Long f = functions.get(kernel + "/" + device);
        return f == null ? MAX_THREADS : attribute(0, f);
    }

    @Override
    public int maxDynamicSharedBytes(long kernel, int device) {
        Long f = functions.get(kernel + "/" + device);
        return f == null ? Integer.MAX_VALUE : attribute(8, f);
    }

    private int attribute(int attribute, long function) {
        int[] value = new int[1];
        check(NativeApi.jk_kernel_attribute(k, value, attribute, function, 0), "hipFuncGetAttribute");
        return value[0];
    }

    /** On the launch thread, whose current device is the stream's: loads the module there first if needed. */
    @Override
    public void launch(long kernel, int[] dims, int sharedBytes, DriverStream stream, byte[] arguments, int[] offsets) {
        long function = functions.computeIfAbsent(kernel + "/" + stream.device(), key -> function(kernel, stream.device()));
        check(NativeApi.jk_launch(k, function, dims, sharedBytes, stream.handle(), arguments, offsets, offsets.length),
                "hipModuleLaunchKernel");
    }

    private long function(long kernel, int device) {
        KernelName n = kernels.get(kernel);
        if (n == null) throw new InvalidArgumentException("no kernel " + kernel + " (its image was unloaded)");
        long module = modules.computeIfAbsent(n.image() + "/" + device, key -> {
            byte[] image = images.get(n.image());
            if (image == null) throw new InvalidArgumentException("image " + n.image() + " was unloaded");
            long[] out = new long[1];
            check(NativeApi.jk_library_load(k, image, out), "hipModuleLoadData");
            return out[0];
        });
        long[] out = new long[1];
        check(NativeApi.jk_library_kernel(k, module, n.name(), out), "hipModuleGetFunction(" + n.name() + ")");
        return out[0];
    }

    /** hipRTC gives a code object, put where a cubin goes. */
    @Override
    CompiledCode compiled(String log, long program, List<String> options) {
        return new CompiledCode(true, log, null, code(program, false));
    }
}
