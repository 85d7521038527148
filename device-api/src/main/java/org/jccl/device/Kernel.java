package org.jccl.device;

import java.util.Arrays;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A kernel of a {@link KernelLibrary}, launched with {@link DeviceApi#launch}. Knows its parameters' sizes where the
 * driver tells them (CUDA 12.4+), so that arguments of the wrong count or size are refused before anything is enqueued.
 */
public final class Kernel {
    private final KernelLibrary library;
    private final String name;
    private final long handle;
    private final long @Nullable [] parameterSizes;
    private final Map<Integer, Limits> limits = new ConcurrentHashMap<>();

    Kernel(KernelLibrary library, String name, long handle, long @Nullable [] parameterSizes) {
        this.library = library;
        this.name = name;
        this.handle = handle;
        this.parameterSizes = parameterSizes;
    }

    public String name() {
        return name;
    }

    public KernelLibrary library() {
        return library;
    }

    /** How many parameters it takes, if the driver says. */
    public OptionalInt parameterCount() {
        return parameterSizes == null ? OptionalInt.empty() : OptionalInt.of(parameterSizes.length);
    }

    /** Each parameter's size in bytes, or null where the driver cannot tell. */
    public long @Nullable [] parameterSizes() {
        return parameterSizes == null ? null : parameterSizes.clone();
    }

    long handle() {
        return handle;
    }

    /** What a block of it may use on {@code device}: asked of the driver once per device. */
    record Limits(int maxThreadsPerBlock, int maxDynamicSharedBytes) {
    }

    Limits limits(int device) {
        return limits.computeIfAbsent(device, d -> new Limits(library.runtime().maxThreadsPerBlock(handle, d),
                library.runtime().maxDynamicSharedBytes(handle, d)));
    }

    @Override
    public String toString() {
        return "Kernel(" + name + (parameterSizes == null ? "" : ", parameter bytes " + Arrays.toString(parameterSizes)) + ")";
    }
}
