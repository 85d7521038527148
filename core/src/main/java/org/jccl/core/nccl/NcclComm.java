package org.jccl.core.nccl;

import java.util.List;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.LongPointer;
import org.jccl.core.BackendKind;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.CommMemoryStats;
import org.jccl.core.spi.Backoff;
import org.jccl.core.spi.CommProperties;
import org.jccl.core.spi.DevCommHandle;
import org.jccl.core.spi.DevCommRequirements;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.core.spi.WaitDescriptor;
import org.jspecify.annotations.Nullable;

/** An {@code ncclComm_t}. */
final class NcclComm implements DriverComm {
    /** {@code NCCL_SHRINK_DEFAULT}. */
    static final int SHRINK_DEFAULT = 0;
    /** {@code ncclScalarDevice}. */
    static final int SCALAR_DEVICE = 0;
    /** {@code ncclStatGpuMem*}, in the order of {@code ncclCommMemStat_t}. */
    private static final int STAT_SUSPENDABLE = 0;
    private static final int STAT_SUSPENDED = 1;
    private static final int STAT_PERSISTENT = 2;
    private static final int STAT_TOTAL = 3;
    /** The first version that knows {@code NCCL_WIN_STRICT_ORDERING} (2.29.7). */
    private static final int STRICT_ORDERING_VERSION = 22907;
    /** The one-sided calls' {@code flags}: NCCL 2.29 accepts only 0. */
    private static final int NO_FLAGS = 0;

    private final NcclDriver driver;
    private final NativeLibrary lib;
    private final long handle;
    private final boolean nonBlocking;
    private final boolean asyncErrorSafeDuringLaunch;
    /** Native copies of configuration strings, kept while the library may read them. */
    private final List<BytePointer> configStrings;
    private int rank;
    private int size;
    private int device;
    /** Made on first use: the library's facts never change, and callers may ask before every one-sided call. */
    private @Nullable OneSidedLimits oneSidedLimits;

    NcclComm(NcclDriver driver, long handle, int rank, int size, int device, boolean nonBlocking, List<BytePointer> configStrings) {
        this.driver = driver;
        this.lib = driver.library();
        this.handle = handle;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.nonBlocking = nonBlocking;
        this.asyncErrorSafeDuringLaunch = !nonBlocking && NativeApi.jn_getenv("NCCL_COMM_BLOCKING") == null;
        this.configStrings = configStrings;
    }

    long handle() {
        return handle;
    }

    @Override
    public long nativeHandle() {
        return handle;
    }

    boolean nonBlocking() {
        return nonBlocking;
    }

    /** Throws the typed exception for {@code code}, with this communicator's last error. */
    void check(int code, String what) {
        lib.check(code, what, handle);
    }

    /** Polls {@code ncclCommGetAsyncError} on the calling thread until the communicator is no longer in progress. */
    void awaitNotInProgress(String what) {
        int[] state = new int[1];
        for (long start = System.nanoTime(); ; ) {
            check(NativeApi.jn_comm_async_error(lib.ctx, handle, state), "ncclCommGetAsyncError");
            if (state[0] != Errors.IN_PROGRESS) break;
            Backoff.LIBRARY_CALL.pause(System.nanoTime() - start);
        }
        check(state[0], what);
    }

    /** Accepts success, and on a non-blocking communicator waits out ncclInProgress. */
    private void complete(int code, String what) {
        if (code == Errors.IN_PROGRESS && nonBlocking) {
            awaitNotInProgress(what);
        } else {
            check(code, what);
        }
    }

    /** Rank, size and device are known at creation, except for split/shrink results (-1 until asked). */
    @Override
    public int rank() {
        if (rank < 0) rank = query("ncclCommUserRank", 0);
        return rank;
    }

    @Override
    public int size() {
        if (size < 0) size = query("ncclCommCount", 1);
        return size;
    }

    @Override
    public int device() {
        if (device < 0) device = query("ncclCommCuDevice", 2);
        return device;
    }

    private int query(String what, int which) {
        int[] out = new int[1];
        int code = switch (which) {
            case 0 -> NativeApi.jn_comm_user_rank(lib.ctx, handle, out);
            case 1 -> NativeApi.jn_comm_count(lib.ctx, handle, out);
            default -> NativeApi.jn_comm_device(lib.ctx, handle, out);
        };
        check(code, what);
        return out[0];
    }

    private static final ThreadLocal<int[]> ASYNC_ERROR_SCRATCH = ThreadLocal.withInitial(() -> new int[1]);

    @Override
    public int asyncError() {
        int[] out = ASYNC_ERROR_SCRATCH.get(); // polled on every completion: no allocation
        int code = NativeApi.jn_comm_async_error(lib.ctx, handle, out);
        return code == Errors.SUCCESS ? out[0] : code;
    }

    /**
     * NCCL's query completes the communicator's in-flight group job, which only a non-blocking communicator has (a
     * blocking one launches its groups on the calling thread; NCCL 2.28.9's {@code ncclCommGetAsyncError} then only
     * reads atomics). {@code NCCL_COMM_BLOCKING} in the environment may make communicators non-blocking behind an
     * unset configuration, so then jccl takes none for blocking.
     */
    @Override
    public boolean asyncErrorSafeDuringLaunch() {
        return asyncErrorSafeDuringLaunch;
    }

    @Override
    public @Nullable String lastError() {
        String s = NativeApi.jn_last_error(lib.ctx, handle);
        return s == null || s.isEmpty() ? null : s;
    }

    @Override
    public void finalizeComm() {
        lib.features.require(Feature.COMM_FINALIZE);
        complete(NativeApi.jn_comm_finalize(lib.ctx, handle), "ncclCommFinalize");
    }

    @Override
    public void destroy() {
        check(NativeApi.jn_comm_destroy(lib.ctx, handle), "ncclCommDestroy");
        configStrings.forEach(BytePointer::close);
    }

    @Override
    public void abort() {
        check(NativeApi.jn_comm_abort(lib.ctx, handle), "ncclCommAbort");
    }

    @Override
    public @Nullable DriverComm split(int color, int key, CommConfig config) {
        lib.features.require(Feature.COMM_SPLIT);
        List<BytePointer> strings = ConfigLayout.newStringList();
        byte[] cfg = ConfigLayout.encodeOrNull(config, lib.version, lib.features.library(), strings);
        long[] out = new long[1];
        int code = NativeApi.jn_comm_split(lib.ctx, handle, color, key, out, cfg);
        return child(code, out[0], "ncclCommSplit", config, strings, color == DriverConstants.SPLIT_NO_COLOR);
    }

    @Override
    public DriverComm shrink(int[] excludedRanks, CommConfig config) {
        lib.features.require(Feature.COMM_SHRINK);
        List<BytePointer> strings = ConfigLayout.newStringList();
        byte[] cfg = ConfigLayout.encodeOrNull(config, lib.version, lib.features.library(), strings);
        long[] out = new long[1];
        int[] excluded = excludedRanks.clone();
        int code = NativeApi.jn_comm_shrink(lib.ctx, handle, excluded, excluded.length, out, cfg,
                SHRINK_DEFAULT);
        DriverComm c = child(code, out[0], "ncclCommShrink", config, strings, false);
        if (c == null) throw lib.failure(Errors.INTERNAL_ERROR, "ncclCommShrink returned no communicator", handle);
        return c;
    }

    private @Nullable DriverComm child(int code, long newHandle, String what, CommConfig config, List<BytePointer> strings,
                                       boolean excluded) {
        boolean childNonBlocking = config.values().isEmpty() ? nonBlocking : !config.isBlocking();
        if (code == Errors.IN_PROGRESS && (nonBlocking || childNonBlocking)) {
            // The SPI returns a finished communicator: wait on the new one (or on the parent if this rank joins none).
            if (newHandle != 0) {
                new NcclComm(driver, newHandle, -1, -1, -1, true, strings).awaitNotInProgress(what);
            } else {
                awaitNotInProgress(what);
            }
        } else {
            check(code, what);
        }
        if (excluded || newHandle == 0) return null;
        return new NcclComm(driver, newHandle, -1, -1, -1, childNonBlocking, strings);
    }

    @Override
    public long register(MemoryBlock block, long offset, long bytes) {
        lib.features.require(Feature.COMM_REGISTER);
        if (offset < 0 || bytes <= 0 || offset + bytes > block.size()) {
            throw new InvalidArgumentException("register: range outside the block");
        }
        long[] out = new long[1];
        complete(NativeApi.jn_comm_register(lib.ctx, handle, block.address() + offset, bytes, out), "ncclCommRegister");
        return out[0];
    }

    @Override
    public void deregister(long registration) {
        lib.features.require(Feature.COMM_DEREGISTER);
        complete(NativeApi.jn_comm_deregister(lib.ctx, handle, registration), "ncclCommDeregister");
    }

    @Override
    public int createPreMulSum(double hostScalar, @Nullable MemoryBlock deviceScalar, long deviceScalarOffset, DataType type) {
        lib.features.require(Feature.RED_OP_CREATE_PRE_MUL_SUM);
        int[] op = new int[1];
        int code;
        if (deviceScalar == null) {
            byte[] value = ScalarEncoding.encode(hostScalar, type);
            code = NativeApi.jn_red_op_create_pre_mul_sum_host(lib.ctx, op, value, value.length, type.code(), handle);
        } else {
            code = NativeApi.jn_red_op_create_pre_mul_sum(lib.ctx, op, deviceScalar.address() + deviceScalarOffset,
                    type.code(), SCALAR_DEVICE, handle);
        }
        check(code, "ncclRedOpCreatePreMulSum");
        return op[0];
    }

    @Override
    public void destroyReduceOp(int code) {
        check(NativeApi.jn_red_op_destroy(lib.ctx, code, handle), "ncclRedOpDestroy");
    }

    @Override
    public void suspend(int flags) {
        lib.features.require(Feature.COMM_SUSPEND);
        complete(NativeApi.jn_comm_suspend(lib.ctx, handle, flags), "ncclCommSuspend");
    }

    @Override
    public void resume() {
        lib.features.require(Feature.COMM_RESUME);
        complete(NativeApi.jn_comm_resume(lib.ctx, handle), "ncclCommResume");
    }

    @Override
    public CommMemoryStats memStats() {
        lib.features.require(Feature.COMM_MEM_STATS);
        return new CommMemoryStats(stat(STAT_SUSPENDABLE), stat(STAT_SUSPENDED) != 0, stat(STAT_PERSISTENT), stat(STAT_TOTAL));
    }

    private long stat(int which) {
        long[] out = new long[1];
        check(NativeApi.jn_comm_mem_stat(lib.ctx, handle, which, out), "ncclCommMemStats");
        return out[0];
    }

    @Override
    public byte[] growUniqueId() {
        lib.features.require(Feature.COMM_GET_UNIQUE_ID);
        byte[] id = new byte[128];
        check(NativeApi.jn_comm_get_unique_id(lib.ctx, handle, id), "ncclCommGetUniqueId");
        return id;
    }

    @Override
    public DriverComm grow(int newSize, byte @Nullable [] uniqueId, CommConfig config) {
        lib.features.require(Feature.COMM_GROW);
        if (uniqueId != null && uniqueId.length != 128) throw new InvalidArgumentException("a unique id has 128 bytes");
        if (newSize <= size()) throw new InvalidArgumentException("grow needs more than the " + size() + " current ranks, not " + newSize);
        List<BytePointer> strings = ConfigLayout.newStringList();
        byte[] cfg = ConfigLayout.encodeOrNull(config, lib.version, lib.features.library(), strings);
        long[] out = new long[1];
        int code = NativeApi.jn_comm_grow(lib.ctx, handle, newSize, uniqueId, -1, out, cfg);
        DriverComm c = child(code, out[0], "ncclCommGrow", config, strings, false);
        if (c == null) throw lib.failure(Errors.INTERNAL_ERROR, "ncclCommGrow returned no communicator", handle);
        return c;
    }

    @Override
    public void revoke(int flags) {
        lib.features.require(Feature.COMM_REVOKE);
        complete(NativeApi.jn_comm_revoke(lib.ctx, handle, flags), "ncclCommRevoke");
    }

    /**
     * {@code ncclCommWindowRegister}. NCCL queues the registration as a group task that writes the window when the
     * group ends: on a non-blocking communicator that happens in the background after the call has returned
     * ncclSuccess. So the window goes to native memory kept until the communicator is no longer in progress, and a
     * registration inside an open group is refused (its window would be known only at the group's end).
     *
     * @throws UnsupportedFeatureException if the library lacks the function, or NCCL registered no window because the
     *                                     communicator has no symmetric-memory support
     */
    @Override
    public long windowRegister(MemoryBlock block, long offset, long bytes, int flags) {
        lib.features.require(Feature.COMM_WINDOW_REGISTER);
        if (offset < 0 || bytes <= 0 || offset + bytes > block.size()) {
            throw new InvalidArgumentException("windowRegister: range outside the block");
        }
        if (driver.inGroup()) {
            throw new InvalidUsageException("ncclCommWindowRegister inside a group: the window would be known only at the group's end");
        }
        long window;
        try (LongPointer slot = new LongPointer(1)) {
            int code = NativeApi.jn_comm_window_register(lib.ctx, handle, block.address() + offset, bytes, flags, slot);
            if (nonBlocking && (code == Errors.SUCCESS || code == Errors.IN_PROGRESS)) {
                awaitNotInProgress("ncclCommWindowRegister"); // success only says the registration was queued
            } else {
                check(code, "ncclCommWindowRegister");
            }
            window = slot.get();
        }
        if (window == 0) throw noSymmetricMemory();
        return window;
    }

    /** NCCL answers ncclSuccess and a NULL window where the communicator has no symmetric-memory support. */
    private UnsupportedFeatureException noSymmetricMemory() {
        return new UnsupportedFeatureException("ncclCommWindowRegister", lib.ncclPath + " on this communicator, which has no"
                + " symmetric-memory support, so NCCL registered no window (it needs peer-to-peer access between all ranks,"
                + " cuMem allocations, NCCL_WIN_ENABLE not 0, and one NVLink domain or GPU-initiated networking)",
                lib.features.version(), null);
    }

    /** {@code ncclCommWindowDeregister}. */
    @Override
    public void windowDeregister(long window) {
        lib.features.require(Feature.COMM_WINDOW_DEREGISTER);
        complete(NativeApi.jn_comm_window_deregister(lib.ctx, handle, window), "ncclCommWindowDeregister");
    }

    /** {@code ncclWinGetUserPtr}. */
    @Override
    public long windowUserPointer(long window) {
        lib.features.require(Feature.WIN_GET_USER_PTR);
        long[] out = new long[1];
        check(NativeApi.jn_win_get_user_ptr(lib.ctx, handle, window, out), "ncclWinGetUserPtr");
        return out[0];
    }

    /**
     * What NCCL accepts, from its source: signal index 0 and context 0 only ({@code rmaTaskAppend}: "must be 0 for
     * now"), a put's source inside a collective-symmetric window, {@code NCCL_WIN_STRICT_ORDERING} from 2.29.7, windows
     * {@code NCCL_WIN_REQUIRED_ALIGNMENT} into cuMem memory ({@code ncclMemAlloc}).
     */
    @Override
    public OneSidedLimits oneSidedLimits() {
        lib.features.require(Feature.COMM_WINDOW_REGISTER);
        OneSidedLimits limits = oneSidedLimits;
        if (limits == null) {
            int flags = DriverConstants.WIN_COLL_SYMMETRIC
                    | (lib.version >= STRICT_ORDERING_VERSION ? DriverConstants.WIN_STRICT_ORDERING : 0);
            limits = new OneSidedLimits(1, 1, true, flags, DriverConstants.WIN_REQUIRED_ALIGNMENT, true);
            oneSidedLimits = limits;
        }
        return limits;
    }

    /** {@code ncclPutSignal}, handled as {@link NcclDriver#launch} handles operations (group-aware). */
    @Override
    public void putSignal(MemoryRef source, long count, DataType type, int peer, long window, long peerOffset,
                          int signalIndex, int context, DriverStream stream) {
        lib.features.require(Feature.PUT_SIGNAL);
        int code = NativeApi.jn_put_signal(lib.ctx, source.address(), count, type.code(), peer, window, peerOffset,
                signalIndex, context, NO_FLAGS, handle, stream.handle());
        driver.finish(this, code, "ncclPutSignal");
    }

    /** {@code ncclSignal}, handled as {@link NcclDriver#launch} handles operations (group-aware). */
    @Override
    public void signal(int peer, int signalIndex, int context, DriverStream stream) {
        lib.features.require(Feature.SIGNAL);
        int code = NativeApi.jn_signal(lib.ctx, peer, signalIndex, context, NO_FLAGS, handle, stream.handle());
        driver.finish(this, code, "ncclSignal");
    }

    /**
     * {@code ncclWaitSignal}: the descriptors go as one flat array in {@code ncclWaitSignalDesc_t}'s field order (count,
     * peer, signal index, context), which NCCL copies while enqueueing.
     */
    @Override
    public void waitSignal(WaitDescriptor[] waits, DriverStream stream) {
        lib.features.require(Feature.WAIT_SIGNAL);
        int[] descriptors = new int[4 * waits.length];
        for (int i = 0; i < waits.length; i++) {
            WaitDescriptor w = waits[i];
            descriptors[4 * i] = w.count();
            descriptors[4 * i + 1] = w.peer();
            descriptors[4 * i + 2] = w.signalIndex();
            descriptors[4 * i + 3] = w.context();
        }
        int code = NativeApi.jn_wait_signal(lib.ctx, waits.length, descriptors, handle, stream.handle());
        driver.finish(this, code, "ncclWaitSignal");
    }

    /** {@code ncclCommQueryProperties} with the structure laid out for the loaded version. */
    @Override
    public CommProperties queryProperties() {
        lib.features.require(Feature.COMM_QUERY_PROPERTIES);
        byte[] properties = DeviceApiLayout.emptyProperties(lib.version);
        check(NativeApi.jn_comm_query_properties(lib.ctx, handle, properties), "ncclCommQueryProperties");
        return DeviceApiLayout.properties(properties);
    }

    /**
     * {@code ncclDevCommCreate} into native memory the handle owns. Inside a group NCCL writes the device communicator
     * at the group's end; outside one, a non-blocking communicator finishes it in the background, which is waited out
     * as for windows.
     */
    @Override
    public DevCommHandle devCommCreate(DevCommRequirements requirements) {
        lib.features.require(Feature.DEV_COMM_CREATE);
        if (lib.kind == BackendKind.RCCL) {
            // jccl lays the structures out from NCCL's headers and has checked them against no RCCL build.
            throw new UnsupportedFeatureException("ncclDevCommCreate", lib.ncclPath + " (RCCL's device-communicator layout is"
                    + " not verified by jccl)", lib.features.version(), null);
        }
        NcclDevComm devComm = new NcclDevComm(DeviceApiLayout.requirements(requirements, lib.version, lib.features.library()),
                lib.version);
        try {
            int code = NativeApi.jn_dev_comm_create(lib.ctx, handle, devComm.requirementsAddress(), devComm.devCommAddress());
            if (nonBlocking && !driver.inGroup() && (code == Errors.SUCCESS || code == Errors.IN_PROGRESS)) {
                awaitNotInProgress("ncclDevCommCreate");
            } else {
                driver.finish(this, code, "ncclDevCommCreate");
            }
            return devComm;
        } catch (RuntimeException e) {
            devComm.free();
            throw e;
        }
    }

    @Override
    public void devCommDestroy(DevCommHandle devComm) {
        lib.features.require(Feature.DEV_COMM_DESTROY);
        complete(NativeApi.jn_dev_comm_destroy(lib.ctx, handle, ((NcclDevComm) devComm).devCommAddress()), "ncclDevCommDestroy");
    }

    @Override
    public String toString() {
        return "NcclComm[0x" + Long.toHexString(handle) + "]";
    }
}
