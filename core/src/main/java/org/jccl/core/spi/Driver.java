package org.jccl.core.spi;

import java.nio.ByteBuffer;
import java.util.List;
import org.jccl.core.BackendKind;
import org.jccl.core.CommConfig;
import org.jccl.core.DeviceInfo;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jspecify.annotations.Nullable;

/**
 * What a backend provides: a GPU runtime (devices, memory, streams, events) and a collective library
 * (communicators, operations, groups). Implemented by the native NCCL/RCCL driver and by the host driver; the
 * engine and the public API use nothing else, so the layers above cannot tell the backends apart.
 *
 * <p>Threading: {@link #launch}, {@link #groupStart}, {@link #groupEnd} and communicator creation run on a
 * communicator's launch thread (NCCL's group state is thread-local); {@link #pollEvents} runs on the event thread.
 */
public interface Driver {
    BackendKind kind();

    /** The loaded library and runtime, e.g. {@code "NCCL 2.28.9 (/path/libnccl.so.2), CUDA runtime 13000"}. */
    String describe();

    /**
     * The loaded libraries in a few words for the start-up line, e.g. {@code NCCL 2.28.9, CUDA runtime 13000}: no
     * paths ({@link #describe()} has them).
     */
    default String summary() {
        return describe();
    }

    /** The collective library's version code ({@code NCCL_VERSION_CODE} form: 22809 for 2.28.9). */
    int version();

    /** Which optional library functions are present. */
    Features features();

    // ---- runtime

    int deviceCount();

    DeviceInfo deviceInfo(int device);

    /** Makes {@code device} current for the calling thread ({@code cudaSetDevice}); no-op for the host. */
    void setDevice(int device);

    MemoryBlock allocate(int device, long bytes, MemoryKind kind);

    /**
     * Memory another library allocated, wrapped without copying: {@code bytes} at {@code address} on {@code device}
     * (checked by the caller). The block frees nothing; its last release tells {@code owner}. GPU drivers take a device
     * pointer as it is; the host driver reads and writes host memory at that address.
     */
    default MemoryBlock wrap(int device, long address, long bytes, ForeignOwner owner) {
        return new ForeignMemoryBlock(address, bytes, device, owner);
    }

    /**
     * The address native code outside jccl sees for {@code offset} bytes into {@code block} (a DLPack export's data
     * pointer): the block's own address on GPU backends. The host backend's own memory has synthetic addresses, so its
     * driver answers the real one.
     */
    default long nativeAddress(MemoryBlock block, long offset) {
        return block.address() + offset;
    }

    /** Synchronous copy of {@code src}'s remaining bytes into a block; the caller owns {@code src}'s position. */
    void write(MemoryBlock dst, long offset, ByteBuffer src);

    /** Synchronous copy from a block into {@code dst}'s remaining bytes; the caller owns {@code dst}'s position. */
    void read(MemoryBlock src, long offset, ByteBuffer dst);

    /** Copy between blocks, enqueued on {@code stream}. */
    void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream);

    /** Sets bytes to {@code value}, enqueued on {@code stream}. */
    void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream);

    DriverStream createStream(int device);

    /** Wraps a stream another library created; {@link DriverStream#destroy()} leaves it alone. */
    DriverStream wrapStream(int device, long handle);

    DriverEvent createEvent(int device, boolean timing);

    /**
     * Queries {@code n} events at once (one native crossing for GPU backends): {@code status[i]} becomes
     * {@link DriverConstants#EVENT_DONE}, {@link DriverConstants#EVENT_PENDING}, or a runtime error code (> 1).
     */
    void pollEvents(DriverEvent[] events, int n, int[] status);

    /** The runtime's text for an error code returned by {@link #pollEvents}. */
    String runtimeErrorString(int code);

    // ---- communicators

    /** {@code ncclGetUniqueId}: the bytes of a new id ({@code NCCL_UNIQUE_ID_BYTES}). */
    byte[] newUniqueId();

    /**
     * {@code ncclCommInitRankConfig}; on a non-blocking config may return a communicator whose
     * {@link DriverComm#asyncError()} is {@code ncclInProgress} until ready.
     */
    DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config);

    /** {@code ncclCommInitRankScalable}: several ids spread the bootstrap load. */
    DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config);

    /** {@code ncclCommInitAll}: one communicator per device, in one process. */
    List<DriverComm> initAll(int[] devices);

    // ---- operations

    /**
     * On the launch thread, around the library calls that launch one work: they belong to operation {@code sequence}
     * of communicator {@code communicatorId}, until a call with null. Lets a driver attribute what the library reports
     * of them (NCCL's profiler events) to jccl's operation; by default nothing.
     */
    default void attribute(@Nullable String communicatorId, long sequence) {
    }

    void groupStart();

    void groupEnd();

    /** {@code ncclGroupSimulateEnd}: ends the group without launching; the estimated time in microseconds. */
    float groupSimulateEnd();

    /** Enqueues one operation on {@code stream}; arguments were validated by the engine. */
    void launch(DriverComm comm, LaunchOp operation, DriverStream stream);

    /**
     * Registers the engine's wake-up: a driver whose events complete on its own threads (the host driver) calls it
     * after an event completes, so a parked event thread notices at once. GPU drivers ignore it: the event thread
     * polls them.
     */
    default void onEventCompleted(Runnable wakeEventThread) {
    }

    /**
     * Throws {@link org.jccl.core.error.UnsupportedFeatureException} if the loaded library cannot run operations of
     * {@code kind} (e.g. {@code ncclGather} before NCCL 2.28). Checked before anything is enqueued.
     */
    default void checkSupported(org.jccl.core.OpKind kind) {
    }

    /**
     * Why the library rejects reduction {@code reduction} (an {@code ncclRedOp_t} code) on {@code type} for a
     * communicator of {@code nranks} ranks (e.g. fp8 on a GPU without it), or null if it accepts it. Checked before
     * anything is enqueued.
     */
    default @Nullable String rejects(org.jccl.core.DataType type, int reduction, int nranks) {
        return null;
    }

    /**
     * Whether ranks live on devices that {@code deviceCount()} numbers (GPU backends). The host backend says false:
     * its ranks have no device, every device argument is ignored and each rank reports
     * {@link DriverConstants#HOST_DEVICE}.
     */
    default boolean hasDevices() {
        return true;
    }

    /** The error string the library gives a {@code ncclResult_t}, or null. */
    @Nullable String resultString(int code);

    /**
     * The file the collective library was loaded from, resolved to a path (its headers are usually in
     * {@code ../include} beside it), or null for backends without one.
     */
    default @Nullable String libraryFile() {
        return null;
    }

    /**
     * Stream capture into graphs (CUDA or HIP graphs), for steps captured once and replayed.
     *
     * @throws UnsupportedFeatureException where the backend or its runtime cannot capture (the host backend: steps
     *                                     re-issue their operations there)
     */
    default GraphCapture graphs() {
        throw features().unsupported("stream capture into graphs", null);
    }

    /**
     * The backend's kernels: loading images, launching kernels on streams, compiling source at run time. Opened on
     * first use.
     *
     * @throws UnsupportedFeatureException where the backend has no kernels (host) or the driver
     *                                     API cannot be loaded
     */
    default KernelRuntime kernels() {
        throw features().unsupported("kernels launched from Java", null);
    }
}
