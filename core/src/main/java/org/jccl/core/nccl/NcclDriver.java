package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.BackendKind;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.DeviceInfo;
import org.jccl.core.OpKind;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.GraphCapture;
import org.jccl.core.spi.KernelRuntime;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * The driver of the NCCL backend (CUDA runtime + NCCL) and of the RCCL backend (HIP runtime + RCCL): the same code
 * over one function table, since RCCL exports NCCL's names and HIP's runtime has CUDA's shapes.
 *
 * <p>Non-blocking communicators ({@code blocking=0}) may answer {@code ncclInProgress}; where the SPI needs a call
 * finished before returning (launch outside a group, group end, finalize, split, shrink, register, window
 * registration), the calling thread polls {@code ncclCommGetAsyncError} until it is no longer in progress.
 */
public final class NcclDriver implements Driver {
    private final NativeLibrary lib;
    private final GpuRuntime runtime;
    private final NcclGraphs graphs;
    private final ThreadLocal<GroupState> groups = ThreadLocal.withInitial(GroupState::new);
    private volatile @Nullable Boolean allDevicesHaveFp8;
    private volatile @Nullable NcclKernels kernels;

    private NcclDriver(NativeLibrary lib) {
        this.lib = lib;
        this.runtime = new GpuRuntime(lib);
        this.graphs = new NcclGraphs(lib);
    }

    /** Opens the backend's libraries as the settings name them ({@code jccl.nccl.library}, {@code jccl.cuda.runtime}, ...). */
    static NcclDriver open(BackendKind kind) {
        if (kind == BackendKind.RCCL) {
            return open(kind, JcclSettings.RCCL_LIBRARY.value(), JcclSettings.HIP_RUNTIME.value());
        }
        return open(kind, JcclSettings.NCCL_LIBRARY.value(), JcclSettings.CUDA_RUNTIME.value());
    }

    /** Opens the first loadable file of each colon-separated list. */
    static NcclDriver open(BackendKind kind, String libraryCandidates, String runtimeCandidates) {
        if (kind == BackendKind.HOST) throw new IllegalArgumentException("the native driver serves nccl and rccl");
        return new NcclDriver(NativeLibrary.open(kind, libraryCandidates, runtimeCandidates));
    }

    NativeLibrary library() {
        return lib;
    }

    @Override
    public BackendKind kind() {
        return lib.kind;
    }

    @Override
    public String describe() {
        int[] v = new int[1];
        String runtime = NativeApi.jn_rt_version(lib.ctx, v) == 0 ? " " + v[0] : "";
        return (lib.kind == BackendKind.RCCL ? "RCCL " : "NCCL ") + LibraryVersions.format(lib.version) + " (" + lib.ncclPath
                + "), " + (lib.kind == BackendKind.RCCL ? "HIP" : "CUDA") + " runtime" + runtime + " (" + lib.runtimePath + ")";
    }

    @Override
    public String summary() {
        int[] v = new int[1];
        String runtime = NativeApi.jn_rt_version(lib.ctx, v) == 0 ? " " + v[0] : "";
        return (lib.kind == BackendKind.RCCL ? "RCCL " : "NCCL ") + LibraryVersions.format(lib.version) + ", "
                + (lib.kind == BackendKind.RCCL ? "HIP" : "CUDA") + " runtime" + runtime;
    }

    @Override
    public int version() {
        return lib.version;
    }
    /**
     * CUDA's driver API and NVRTC, or HIP's module API and hipRTC, opened on first use.
     *
     * @throws UnsupportedFeatureException when the driver API cannot be loaded
     */
    @Override
    public KernelRuntime kernels() {
        NcclKernels k = kernels;
        if (k != null) return k;
        synchronized (this) {
            if (kernels == null) {
                kernels = lib.kind == BackendKind.RCCL
                        ? HipKernels.open(lib.runtimePath, JcclSettings.HIPRTC_LIBRARY.value())
                        : NcclKernels.open(JcclSettings.CUDA_DRIVER.value(), JcclSettings.NVRTC_LIBRARY.value());
            }
            return kernels;
        }
    }

    /** CUDA or HIP graphs, where the runtime has every function they need. */
    @Override
    public GraphCapture graphs() {
        for (String f : new String[] {"cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiateWithFlags",
                "cudaGraphLaunch", "cudaGraphExecDestroy", "cudaGraphDestroy"}) {
            String name = lib.kind == BackendKind.RCCL ? f.replace("cuda", "hip") : f;
            if (!lib.runtimeFunctions.contains(name)) {
                throw new UnsupportedFeatureException(name + " (stream capture into graphs)", lib.runtimePath,
                        String.valueOf(lib.version), null);
            }
        }
        return graphs;
    }

    @Override
    public String libraryFile() {
        return NativeApi.jn_nccl_file(lib.ctx);
    }


    @Override
    public Features features() {
        return lib.features;
    }

    // ---- runtime: answered by the GPU runtime

    @Override
    public int deviceCount() {
        return runtime.deviceCount();
    }

    @Override
    public DeviceInfo deviceInfo(int device) {
        return runtime.deviceInfo(device);
    }

    @Override
    public void setDevice(int device) {
        runtime.setDevice(device);
    }

    @Override
    public MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        return runtime.allocate(device, bytes, kind);
    }

    @Override
    public void write(MemoryBlock dst, long offset, ByteBuffer src) {
        runtime.write(dst, offset, src);
    }

    @Override
    public void read(MemoryBlock src, long offset, ByteBuffer dst) {
        runtime.read(src, offset, dst);
    }

    @Override
    public void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
        runtime.copyAsync(dst, dstOffset, src, srcOffset, bytes, stream);
    }

    @Override
    public void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream) {
        runtime.memsetAsync(dst, offset, value, bytes, stream);
    }

    @Override
    public DriverStream createStream(int device) {
        return runtime.createStream(device);
    }

    @Override
    public DriverStream wrapStream(int device, long handle) {
        return runtime.wrapStream(device, handle);
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        return runtime.createEvent(device, timing);
    }

    @Override
    public void pollEvents(DriverEvent[] events, int n, int[] status) {
        runtime.pollEvents(events, n, status);
    }

    @Override
    public String runtimeErrorString(int code) {
        return runtime.runtimeErrorString(code);
    }

    // ---- communicators

    @Override
    public byte[] newUniqueId() {
        byte[] id = new byte[128];
        lib.check(NativeApi.jn_unique_id(lib.ctx, id), "ncclGetUniqueId", 0);
        return id;
    }

    @Override
    public DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config) {
        checkId(uniqueId);
        List<BytePointer> strings = ConfigLayout.newStringList();
        byte[] cfg = ConfigLayout.encodeOrNull(config, lib.version, lib.features.library(), strings);
        long[] comm = new long[1];
        int[] code = new int[1];
        runtime.onDevice(device, () -> code[0] = NativeApi.jn_comm_init_rank_config(lib.ctx, comm, nranks, uniqueId, rank, cfg));
        return created(code[0], comm[0], "ncclCommInitRankConfig", config, rank, nranks, device, strings);
    }

    @Override
    public DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config) {
        lib.features.require(Feature.COMM_INIT_RANK_SCALABLE);
        if (uniqueIds.isEmpty()) throw new InvalidArgumentException("initRankScalable needs at least one unique id");
        byte[] ids = new byte[128 * uniqueIds.size()];
        for (int i = 0; i < uniqueIds.size(); i++) {
            checkId(uniqueIds.get(i));
            System.arraycopy(uniqueIds.get(i), 0, ids, 128 * i, 128);
        }
        List<BytePointer> strings = ConfigLayout.newStringList();
        byte[] cfg = ConfigLayout.encodeOrNull(config, lib.version, lib.features.library(), strings);
        long[] comm = new long[1];
        int[] code = new int[1];
        runtime.onDevice(device, () -> code[0] = NativeApi.jn_comm_init_rank_scalable(lib.ctx, comm, nranks, rank, uniqueIds.size(), ids, cfg));
        return created(code[0], comm[0], "ncclCommInitRankScalable", config, rank, nranks, device, strings);
    }

    private DriverComm created(int code, long comm, String what, CommConfig config, int rank, int nranks, int device,
                               List<BytePointer> strings) {
        // A non-blocking creation answers ncclInProgress; the engine polls the communicator until it is ready.
        if (code != Errors.SUCCESS && !(code == Errors.IN_PROGRESS && !config.isBlocking())) {
            throw lib.failure(code, what, comm);
        }
        if (code == Errors.SUCCESS) NcclProfiler.communicatorCreated();
        return new NcclComm(this, comm, rank, nranks, device, !config.isBlocking(), strings);
    }

    private static void checkId(byte[] id) {
        if (id == null || id.length != 128) throw new InvalidArgumentException("a unique id has 128 bytes");
    }

    @Override
    public List<DriverComm> initAll(int[] devices) {
        long[] comms = new long[devices.length];
        lib.check(NativeApi.jn_comm_init_all(lib.ctx, comms, devices.length, devices.clone()), "ncclCommInitAll", 0);
        List<DriverComm> out = new ArrayList<>(devices.length);
        for (int i = 0; i < devices.length; i++) {
            out.add(new NcclComm(this, comms[i], i, devices.length, devices[i], false, List.of()));
        }
        NcclProfiler.communicatorCreated();
        return List.copyOf(out);
    }

    // ---- operations

    @Override
    public void attribute(@Nullable String communicatorId, long sequence) {
        NcclProfiler.attribute(communicatorId, sequence);
    }

    @Override
    public void groupStart() {
        lib.check(NativeApi.jn_group_start(lib.ctx), "ncclGroupStart", 0);
        groups.get().depth++;
    }

    @Override
    public void groupEnd() {
        GroupState g = groups.get();
        int code = NativeApi.jn_group_end(lib.ctx);
        g.depth = Math.max(0, g.depth - 1);
        if (g.depth > 0) {
            if (code != Errors.IN_PROGRESS) lib.check(code, "ncclGroupEnd", 0);
            return;
        }
        List<NcclComm> touched = g.nonBlocking;
        try {
            if (code == Errors.IN_PROGRESS) {
                for (NcclComm c : touched) c.awaitNotInProgress("ncclGroupEnd");
            } else {
                lib.check(code, "ncclGroupEnd", touched.isEmpty() ? 0 : touched.get(0).handle());
            }
        } finally {
            touched.clear();
        }
    }

    /** Whether the calling thread is inside {@link #groupStart()}. */
    boolean inGroup() {
        return groups.get().depth > 0;
    }

    @Override
    public float groupSimulateEnd() {
        lib.features.require(Feature.GROUP_SIMULATE_END);
        float[] micros = new float[1];
        GroupState g = groups.get();
        int code = NativeApi.jn_group_simulate_end(lib.ctx, lib.version, micros);
        g.depth = Math.max(0, g.depth - 1);
        g.nonBlocking.clear();
        lib.check(code, "ncclGroupSimulateEnd", 0);
        return micros[0];
    }

    @Override
    public void checkSupported(OpKind kind) {
        switch (kind) {
            case GATHER -> lib.features.require(Feature.GATHER);
            case SCATTER -> lib.features.require(Feature.SCATTER);
            case ALL_TO_ALL -> lib.features.require(Feature.ALL_TO_ALL);
            case ALL_TO_ALL_V -> lib.features.require(Feature.ALL_TO_ALL_V);
            case ALL_REDUCE_WITH_BIAS -> lib.features.require(Feature.ALL_REDUCE_WITH_BIAS);
            default -> {
            }
        }
    }

    /** Enqueues a validated operation: its feature was checked by {@link #checkSupported} before it was issued. */
    @Override
    public void launch(DriverComm driverComm, LaunchOp op, DriverStream stream) {
        NcclComm comm = (NcclComm) driverComm;
        long c = comm.handle();
        long s = stream.handle();
        long send = op.sendAddress();
        long recv = op.recvAddress();
        int type = op.type().code();
        int red = op.reduction() == LaunchOp.NO_REDUCTION ? 0 : op.reduction();
        long count = op.count();
        int code = switch (op.kind()) {
            case ALL_REDUCE -> NativeApi.jn_all_reduce(lib.ctx, send, recv, count, type, red, c, s);
            case BROADCAST -> NativeApi.jn_broadcast(lib.ctx, send, recv, count, type, op.peer(), c, s);
            case REDUCE -> NativeApi.jn_reduce(lib.ctx, send, recv, count, type, red, op.peer(), c, s);
            case ALL_GATHER -> NativeApi.jn_all_gather(lib.ctx, send, recv, count, type, c, s);
            case REDUCE_SCATTER -> NativeApi.jn_reduce_scatter(lib.ctx, send, recv, count, type, red, c, s);
            case GATHER -> NativeApi.jn_gather(lib.ctx, send, recv, count, type, op.peer(), c, s);
            case SCATTER -> NativeApi.jn_scatter(lib.ctx, send, recv, count, type, op.peer(), c, s);
            case ALL_TO_ALL -> NativeApi.jn_all_to_all(lib.ctx, send, recv, count, type, c, s);
            case ALL_TO_ALL_V -> {
                LaunchOp.VarCounts v = Objects.requireNonNull(op.counts(), "allToAllv counts");
                yield NativeApi.jn_all_to_allv(lib.ctx, send, v.sendCounts(), v.sendDisplacements(), recv, v.recvCounts(),
                        v.recvDisplacements(), type, c, s);
            }
            case ALL_REDUCE_WITH_BIAS -> {
                long bias = Objects.requireNonNull(op.bias(), "bias").address();
                yield NativeApi.jn_all_reduce_with_bias(lib.ctx, send, recv, count, type, red, c, s, bias);
            }
            case SEND -> NativeApi.jn_send(lib.ctx, send, count, type, op.peer(), c, s);
            case RECV -> NativeApi.jn_recv(lib.ctx, recv, count, type, op.peer(), c, s);
        };
        finish(comm, code, op.kind().method());
    }

    /**
     * The result handling of every enqueued operation ({@link #launch}, and the one-sided calls of {@link NcclComm}):
     * accepts success; on a non-blocking communicator waits out ncclInProgress, or inside a group leaves that to
     * {@link #groupEnd()}, which then polls the communicator.
     */
    void finish(NcclComm comm, int code, String what) {
        if (comm.nonBlocking()) {
            GroupState g = groups.get();
            if (g.depth > 0) {
                if (!g.nonBlocking.contains(comm)) g.nonBlocking.add(comm);
                if (code == Errors.IN_PROGRESS) return;
            } else if (code == Errors.IN_PROGRESS) {
                comm.awaitNotInProgress(what);
                return;
            }
        }
        comm.check(code, what);
    }

    /** {@code ncclAvg}; PreMulSum reductions get the codes after it. */
    private static final int AVG = 4;

    @Override
    public @Nullable String rejects(DataType type, int reduction, int nranks) {
        if (type == DataType.BFLOAT16 && lib.kind == BackendKind.NCCL && lib.version < 21000) {
            return "bfloat16 needs NCCL 2.10 or newer; loaded " + LibraryVersions.format(lib.version);
        }
        if (type.isFloat8()) {
            if (lib.version < 22400) {
                return type + " needs " + (lib.kind == BackendKind.RCCL ? "RCCL" : "NCCL") + " 2.24 or newer; loaded "
                        + LibraryVersions.format(lib.version);
            }
            if (lib.kind == BackendKind.NCCL && !allDevicesHaveFp8()) {
                return type + " needs GPUs of compute capability 9.0 or newer";
            }
            // Measured with NCCL 2.28.9 on one H200 and one H100: allReduce, reduce and reduceScatter of fp8 with avg
            // or a PreMulSum (codes from ncclAvg up) return ncclInvalidArgument on a one-rank communicator; sum, max,
            // min, prod, and every reduction on two ranks, work.
            if (lib.kind == BackendKind.NCCL && reduction >= AVG && nranks == 1) {
                return "NCCL rejects avg and PreMulSum of " + type + " on a one-rank communicator (ncclInvalidArgument)";
            }
        }
        return null;
    }

    private boolean allDevicesHaveFp8() {
        Boolean known = allDevicesHaveFp8;
        if (known != null) return known;
        boolean all = true;
        for (int d = 0; d < deviceCount(); d++) all &= runtime.attribute(GpuRuntime.CUDA_ATTR_COMPUTE_MAJOR, d) >= 9;
        allDevicesHaveFp8 = all;
        return all;
    }

    @Override
    public @Nullable String resultString(int code) {
        return lib.resultString(code);
    }

    /** The current thread's group nesting and the non-blocking communicators launched in it. */
    private static final class GroupState {
        int depth;
        final List<NcclComm> nonBlocking = new ArrayList<>(4);
    }
}
