package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.bytedeco.javacpp.Pointer;
import org.jccl.core.BackendKind;
import org.jccl.core.DeviceInfo;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;

/**
 * The GPU runtime half of the native driver: devices, memory, copies, streams and events, through CUDA's runtime or
 * HIP's (one table of the same shapes). {@link NcclDriver} answers the runtime part of the driver contract with it.
 */
final class GpuRuntime {
    /** {@code cudaStreamNonBlocking}. */
    static final int STREAM_NON_BLOCKING = 1;
    /** {@code cudaEventDisableTiming}. */
    static final int EVENT_DISABLE_TIMING = 2;
    /** {@code cudaMemcpyDefault}: direction inferred from the addresses (unified addressing). */
    static final int MEMCPY_DEFAULT = 4;
    /** Reported by {@link #pollEvents} for runtime error 1, which would read as {@link DriverConstants#EVENT_PENDING}. */
    static final int INVALID_VALUE_STATUS = 0x7fff0001;
    static final int CUDA_ATTR_MULTIPROCESSORS = 16;
    static final int CUDA_ATTR_COMPUTE_MAJOR = 75;
    static final int CUDA_ATTR_COMPUTE_MINOR = 76;
    private static final int BOUNCE_LIMIT = 1 << 22;

    private final NativeLibrary lib;
    private long[] pollHandles = new long[64];

    GpuRuntime(NativeLibrary lib) {
        this.lib = lib;
    }

    int deviceCount() {
        int[] n = new int[1];
        int code = NativeApi.jn_rt_device_count(lib.ctx, n);
        // No driver or no device reads as zero devices: the automatic choice then falls back to the host backend.
        return code == 0 ? n[0] : 0;
    }

    DeviceInfo deviceInfo(int device) {
        checkDevice(device);
        byte[] name = new byte[256];
        lib.checkRuntime(NativeApi.jn_rt_device_name(lib.ctx, name, name.length, device), "cudaGetDeviceProperties");
        byte[] bus = new byte[64];
        lib.checkRuntime(NativeApi.jn_rt_pci_bus_id(lib.ctx, bus, bus.length, device), "cudaDeviceGetPCIBusId");
        long[] free = new long[1];
        long[] total = new long[1];
        onDevice(device, () -> lib.checkRuntime(NativeApi.jn_rt_mem_info(lib.ctx, free, total), "cudaMemGetInfo"));
        int major = 0;
        int minor = 0;
        int sms = 0;
        if (lib.kind == BackendKind.NCCL) {
            // HIP numbers its attributes differently; the HIP backend reports 0 (unknown) rather than guess.
            major = attribute(CUDA_ATTR_COMPUTE_MAJOR, device);
            minor = attribute(CUDA_ATTR_COMPUTE_MINOR, device);
            sms = attribute(CUDA_ATTR_MULTIPROCESSORS, device);
        }
        return new DeviceInfo(device, cString(name), total[0], major, minor, sms, cString(bus));
    }

    int attribute(int attribute, int device) {
        int[] v = new int[1];
        lib.checkRuntime(NativeApi.jn_rt_device_attribute(lib.ctx, v, attribute, device), "cudaDeviceGetAttribute");
        return v[0];
    }

    void setDevice(int device) {
        if (device == DriverConstants.HOST_DEVICE) return;
        lib.checkRuntime(NativeApi.jn_rt_set_device(lib.ctx, device), "cudaSetDevice");
    }

    /** Runs {@code body} with {@code device} current, then restores the caller's device. */
    void onDevice(int device, Runnable body) {
        if (device == DriverConstants.HOST_DEVICE) {
            body.run();
            return;
        }
        int[] previous = new int[1];
        boolean restore = NativeApi.jn_rt_get_device(lib.ctx, previous) == 0 && previous[0] != device;
        setDevice(device);
        try {
            body.run();
        } finally {
            if (restore) NativeApi.jn_rt_set_device(lib.ctx, previous[0]);
        }
    }

    MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        Objects.requireNonNull(kind, "kind");
        if (bytes <= 0) throw new InvalidArgumentException("allocation size must be positive, not " + bytes);
        long[] address = new long[1];
        switch (kind) {
            case DEVICE -> onDevice(device, () -> lib.checkRuntime(NativeApi.jn_rt_malloc(lib.ctx, address, bytes), "cudaMalloc"));
            case PINNED_HOST -> onDevice(device, () -> lib.checkRuntime(NativeApi.jn_rt_host_alloc(lib.ctx, address, bytes, 0), "cudaHostAlloc"));
            case COMMUNICATION -> {
                lib.features.require(Feature.MEM_ALLOC);
                onDevice(device, () -> lib.check(NativeApi.jn_mem_alloc(lib.ctx, address, bytes), "ncclMemAlloc", 0));
            }
        }
        return new NcclMemory(lib, address[0], bytes, device, kind);
    }

    void write(MemoryBlock dst, long offset, ByteBuffer src) {
        int n = src.remaining();
        checkRange(dst, offset, n);
        if (n == 0) return;
        if (src.isDirect()) {
            long from = addressOf(src) + src.position();
            lib.checkRuntime(NativeApi.jn_rt_memcpy(lib.ctx, dst.address() + offset, from, n, MEMCPY_DEFAULT), "cudaMemcpy");
            awaitStagedCopies();
            return;
        }
        // Heap buffers have no stable address: copy through a direct bounce buffer, in slices.
        ByteBuffer bounce = ByteBuffer.allocateDirect(Math.min(n, BOUNCE_LIMIT));
        long bounceAddress = addressOf(bounce);
        ByteBuffer source = src.duplicate();
        long at = offset;
        while (source.hasRemaining()) {
            int chunk = Math.min(source.remaining(), bounce.capacity());
            bounce.clear();
            ByteBuffer slice = source.slice();
            slice.limit(chunk);
            bounce.put(slice);
            lib.checkRuntime(NativeApi.jn_rt_memcpy(lib.ctx, dst.address() + at, bounceAddress, chunk, MEMCPY_DEFAULT), "cudaMemcpy");
            source.position(source.position() + chunk);
            at += chunk;
        }
        awaitStagedCopies();
    }

    /**
     * cudaMemcpy from pageable host memory (a direct ByteBuffer is malloc'd) returns once the bytes are staged, before
     * the DMA into the device has finished; work on jccl's non-blocking streams does not wait for the default stream
     * that carries it. A put issued right after a write read the source half-copied (one process per GPU, 4 × H200).
     * Waiting for the default stream makes the write synchronous, as documented.
     */
    private void awaitStagedCopies() {
        lib.checkRuntime(NativeApi.jn_rt_stream_synchronize(lib.ctx, 0), "cudaStreamSynchronize");
    }

    void read(MemoryBlock src, long offset, ByteBuffer dst) {
        int n = dst.remaining();
        checkRange(src, offset, n);
        if (n == 0) return;
        if (dst.isDirect()) {
            long to = addressOf(dst) + dst.position();
            lib.checkRuntime(NativeApi.jn_rt_memcpy(lib.ctx, to, src.address() + offset, n, MEMCPY_DEFAULT), "cudaMemcpy");
            return;
        }
        ByteBuffer bounce = ByteBuffer.allocateDirect(Math.min(n, BOUNCE_LIMIT));
        long bounceAddress = addressOf(bounce);
        ByteBuffer target = dst.duplicate();
        long at = offset;
        while (target.hasRemaining()) {
            int chunk = Math.min(target.remaining(), bounce.capacity());
            lib.checkRuntime(NativeApi.jn_rt_memcpy(lib.ctx, bounceAddress, src.address() + at, chunk, MEMCPY_DEFAULT), "cudaMemcpy");
            bounce.clear().limit(chunk);
            target.put(bounce);
            at += chunk;
        }
    }

    /** The address of a direct buffer's first byte (index 0; callers add the position). */
    private static long addressOf(ByteBuffer direct) {
        return new Pointer(direct.duplicate().clear()).address();
    }

    private static void checkRange(MemoryBlock block, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset + bytes > block.size()) {
            throw new InvalidArgumentException("range [" + offset + ", " + (offset + bytes) + ") outside a block of " + block.size() + " bytes");
        }
    }

    void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
        checkRange(dst, dstOffset, bytes);
        checkRange(src, srcOffset, bytes);
        lib.checkRuntime(NativeApi.jn_rt_memcpy_async(lib.ctx, dst.address() + dstOffset, src.address() + srcOffset, bytes,
                MEMCPY_DEFAULT, stream.handle()), "cudaMemcpyAsync");
    }

    void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream) {
        checkRange(dst, offset, bytes);
        lib.checkRuntime(NativeApi.jn_rt_memset_async(lib.ctx, dst.address() + offset, value, bytes, stream.handle()), "cudaMemsetAsync");
    }

    DriverStream createStream(int device) {
        long[] handle = new long[1];
        onDevice(device, () -> lib.checkRuntime(NativeApi.jn_rt_stream_create(lib.ctx, handle, STREAM_NON_BLOCKING), "cudaStreamCreateWithFlags"));
        return new NcclStream(lib, device, handle[0], true);
    }

    DriverStream wrapStream(int device, long handle) {
        return new NcclStream(lib, device, handle, false);
    }

    DriverEvent createEvent(int device, boolean timing) {
        long[] handle = new long[1];
        onDevice(device, () -> lib.checkRuntime(NativeApi.jn_rt_event_create(lib.ctx, handle, timing ? 0 : EVENT_DISABLE_TIMING),
                "cudaEventCreateWithFlags"));
        return new NcclEvent(lib, device, handle[0], timing);
    }

    /**
     * Called by the event thread only: one native crossing for all {@code n} events. One event (one busy stream, the
     * usual case) is queried without the arrays: passing a Java array to native code copies it in and out each way.
     */
    void pollEvents(DriverEvent[] events, int n, int[] status) {
        if (n == 1) {
            int code = NativeApi.jn_rt_event_query(lib.ctx, events[0].handle());
            if (code == NativeApi.MISSING) lib.checkRuntime(code, "cudaEventQuery");
            status[0] = eventStatus(code);
            return;
        }
        if (pollHandles.length < n) pollHandles = new long[Math.max(n, pollHandles.length * 2)];
        long[] handles = pollHandles;
        for (int i = 0; i < n; i++) handles[i] = events[i].handle();
        lib.checkRuntime(NativeApi.jn_rt_event_query_all(lib.ctx, handles, n, status), "cudaEventQuery");
        for (int i = 0; i < n; i++) status[i] = eventStatus(status[i]);
    }

    /** A runtime code as {@link #pollEvents} reports it. */
    static int eventStatus(int runtimeCode) {
        if (runtimeCode == 0) return DriverConstants.EVENT_DONE;
        if (runtimeCode == NcclEvent.NOT_READY) return DriverConstants.EVENT_PENDING;
        return runtimeCode == 1 ? INVALID_VALUE_STATUS : runtimeCode;
    }

    String runtimeErrorString(int code) {
        int runtimeCode = code == INVALID_VALUE_STATUS ? 1 : code;
        String s = lib.runtimeErrorString(runtimeCode);
        return s == null ? "runtime error " + runtimeCode : s;
    }

    private void checkDevice(int device) {
        int n = deviceCount();
        if (device < 0 || device >= n) throw new InvalidArgumentException("device " + device + " out of range (" + n + " device(s))");
    }

    private static String cString(byte[] bytes) {
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) n++;
        return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }
}
