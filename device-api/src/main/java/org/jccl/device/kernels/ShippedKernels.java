package org.jccl.device.kernels;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.DeviceInfo;
import org.jccl.device.Kernel;
import org.jccl.device.KernelCompiler;
import org.jccl.device.KernelLibrary;
import org.jccl.device.KernelSource;

/** jccl_kernels.cu, compiled for a device's architecture and loaded once per backend and architecture. */
final class ShippedKernels {
    private static final Map<Key, KernelLibrary> LOADED = new ConcurrentHashMap<>();

    private record Key(Backend backend, int computeMajor, int computeMinor) {
    }

    private ShippedKernels() {
    }

    /** The kernel {@code name} for {@code communicator}'s device (compiled on first use, cached after). */
    static Kernel kernel(Communicator communicator, String name) {
        int device = communicator.device();
        DeviceInfo info = communicator.backend().deviceInfo(device);
        Key key = new Key(communicator.backend(), info.computeMajor(), info.computeMinor());
        KernelLibrary library = LOADED.computeIfAbsent(key, k -> KernelLibrary.load(communicator.backend(),
                KernelCompiler.of(communicator.backend()).compile(source(), device)));
        return library.kernel(name);
    }

    static KernelSource source() {
        return KernelSource.fromResource(ShippedKernels.class, "/org/jccl/device/kernels/jccl_kernels.cu");
    }
}
