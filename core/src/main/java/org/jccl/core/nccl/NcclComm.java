package org.jccl.core.nccl;

import java.util.List;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommMemoryStats;
import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DeviceCommSupport;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.thread.Backoff;
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
    private final NcclOneSided oneSided;
    private final NcclDeviceComms deviceComms;

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
        this.oneSided = new NcclOneSided(this);
        this.deviceComms = new NcclDeviceComms(this);
    }

    long handle() {
        return handle;
    }

    NcclDriver driver() {
        return driver;
    }

    NativeLibrary library() {
        return lib;
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
    void complete(int code, String what) {
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

    /** The module capabilities: windows and one-sided operations, and the device API. */
    @Override
    public <T> @Nullable T capability(Class<T> type) {
        if (type == OneSidedComm.class) return type.cast(oneSided);
        if (type == DeviceCommSupport.class) return type.cast(deviceComms);
        return null;
    }

    @Override
    public String toString() {
        return "NcclComm[0x" + Long.toHexString(handle) + "]";
    }
}
