package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jccl.core.BackendKind;
import org.jccl.core.CommConfig;
import org.jccl.core.DeviceInfo;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.nccl.NativeMemory;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.ForeignOwner;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * The host backend's driver: memory, streams and events on the CPU, and communicators whose ranks are threads of
 * this JVM ({@link LocalClique}) or processes connected over TCP ({@link NetworkClique}). It implements every operation, data type and reduction with NCCL's semantics;
 * reductions run in a fixed documented order (see {@link Reduction}) so results are reproducible bit for bit.
 *
 * <p>{@code allReduceWithBias} (RCCL's): each rank receives the reduction over all ranks combined once with its own
 * bias buffer by the same operator (sum, avg and PreMulSum add the bias unscaled; prod multiplies; max/min compare).
 * The small float formats round as {@link MiniFloat} documents (fp8 saturating like CUDA's {@code __NV_SATFINITE}).
 * One buffer holds at most {@code Integer.MAX_VALUE - 64} bytes.
 */
public final class HostDriver implements Driver {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HostDriver.class);
    /** The NCCL API level the host backend mirrors (2.28.9), for code that compares versions. */
    public static final int VERSION = 22809;
    private static final int UNIQUE_ID_BYTES = 128;
    /** What the host backend implements of the functions NCCL/RCCL may lack. */
    private static final Set<Feature> FEATURES = EnumSet.of(Feature.COMM_FINALIZE, Feature.COMM_SPLIT,
            Feature.COMM_REGISTER, Feature.COMM_DEREGISTER, Feature.MEM_ALLOC, Feature.RED_OP_CREATE_PRE_MUL_SUM,
            Feature.GROUP_SIMULATE_END, Feature.COMM_INIT_RANK_SCALABLE, Feature.COMM_SHRINK, Feature.ALL_TO_ALL,
            Feature.GATHER, Feature.SCATTER, Feature.ALL_TO_ALL_V, Feature.ALL_REDUCE_WITH_BIAS,
            Feature.COMM_WINDOW_REGISTER, Feature.COMM_WINDOW_DEREGISTER, Feature.WIN_GET_USER_PTR, Feature.PUT_SIGNAL,
            Feature.SIGNAL, Feature.WAIT_SIGNAL);
    /** Communicators being created by {@code initRank}, by unique id. */
    private static final Meetings CREATION = new Meetings();

    private final SecureRandom random = new SecureRandom();
    private final Features features = Features.withoutLibrary("the host backend (pure Java)", functions());
    private volatile Runnable wakeEventThread = () -> { };

    private static List<String> functions() {
        List<String> names = new ArrayList<>(List.of("ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather",
                "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclCommInitRankConfig",
                "ncclCommInitAll", "ncclCommAbort", "ncclCommDestroy", "ncclRedOpDestroy", "ncclGetLastError",
                "ncclCommGetAsyncError"));
        for (Feature f : FEATURES) names.add(f.function());
        return names;
    }

    @Override
    public BackendKind kind() {
        return BackendKind.HOST;
    }

    /** Host ranks have no device: every device argument is ignored. */
    @Override
    public boolean hasDevices() {
        return false;
    }

    @Override
    public String describe() {
        return "host backend (pure Java, " + Runtime.getRuntime().availableProcessors() + " CPU cores, ranks as threads or processes over TCP)";
    }

    @Override
    public String summary() {
        return "pure Java";
    }

    @Override
    public int version() {
        return VERSION;
    }

    @Override
    public Features features() {
        return features;
    }

    // ---- runtime

    /** One "device": the host. */
    @Override
    public int deviceCount() {
        return 1;
    }

    @Override
    public DeviceInfo deviceInfo(int device) {
        return new DeviceInfo(device, "host CPU (" + Runtime.getRuntime().availableProcessors() + " cores)",
                Runtime.getRuntime().maxMemory(), 0, 0, Runtime.getRuntime().availableProcessors(), "");
    }

    @Override
    public void setDevice(int device) {
        // The host has one device.
    }

    /** Every memory kind is host memory here. */
    @Override
    public MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        return HostMemoryBlock.allocate(bytes, kind);
    }

    /** Host memory at {@code address}: the host backend's only kind ({@code device} is ignored, as everywhere here). */
    @Override
    public MemoryBlock wrap(int device, long address, long bytes, ForeignOwner owner) {
        return ForeignHostMemory.wrap(address, bytes, owner);
    }

    /** Foreign blocks carry their real address; the backend's own blocks are asked for theirs (through JNI). */
    @Override
    public long nativeAddress(MemoryBlock block, long offset) {
        HostMemoryBlock b = host(block);
        return (b.kind() == MemoryKind.FOREIGN ? b.address() : NativeMemory.addressOf(b.bytes())) + offset;
    }

    @Override
    public void write(MemoryBlock dst, long offset, ByteBuffer src) {
        HostMemoryBlock d = host(dst);
        int n = src.remaining();
        checkRange(d, offset, n);
        d.bytes().put((int) offset, src, src.position(), n);
        src.position(src.limit());
    }

    @Override
    public void read(MemoryBlock src, long offset, ByteBuffer dst) {
        HostMemoryBlock s = host(src);
        int n = dst.remaining();
        checkRange(s, offset, n);
        dst.put(dst.position(), s.bytes(), (int) offset, n);
        dst.position(dst.limit());
    }

    @Override
    public void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
        HostMemoryBlock d = host(dst);
        HostMemoryBlock s = host(src);
        checkRange(d, dstOffset, bytes);
        checkRange(s, srcOffset, bytes);
        HostStream.of(stream).enqueue(() -> {
            // ByteBuffer.put(int, ByteBuffer, int, int) copies like memmove, so overlapping ranges are safe.
            if (bytes > 0 && !(d == s && dstOffset == srcOffset)) d.bytes().put((int) dstOffset, s.bytes(), (int) srcOffset, (int) bytes);
        });
    }

    @Override
    public void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream) {
        HostMemoryBlock d = host(dst);
        checkRange(d, offset, bytes);
        byte b = (byte) value;
        HostStream.of(stream).enqueue(() -> {
            ByteBuffer buf = d.bytes();
            int end = (int) (offset + bytes);
            int i = (int) offset;
            long pattern = (b & 0xffL) * 0x0101010101010101L;
            for (; i < end && (i & 7) != 0; i++) buf.put(i, b);
            for (; i + 8 <= end; i += 8) buf.putLong(i, pattern);
            for (; i < end; i++) buf.put(i, b);
        });
    }

    @Override
    public DriverStream createStream(int device) {
        return new HostStream();
    }

    /** Wraps a live host stream by its handle; destroying the wrapper leaves the stream alone. */
    @Override
    public DriverStream wrapStream(int device, long handle) {
        return new HostStream.Wrapped(HostStream.byHandle(handle));
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        return new HostEvent(timing, () -> wakeEventThread.run());
    }

    @Override
    public void pollEvents(DriverEvent[] events, int n, int[] status) {
        for (int i = 0; i < n; i++) status[i] = events[i].query();
    }

    @Override
    public String runtimeErrorString(int code) {
        return "host runtime error " + code;
    }

    @Override
    public void onEventCompleted(Runnable wakeEventThread) {
        this.wakeEventThread = wakeEventThread;
    }

    // ---- communicators

    /**
     * A new id that carries a bootstrap address of this process (a listener opened now, closed once the
     * communicator formed or after {@code jccl.host.initTimeout}) and a random token, so ranks in other processes
     * can join; if no listener can be opened, an id for ranks of this JVM only.
     */
    @Override
    public byte[] newUniqueId() {
        return newUniqueId(true);
    }

    /** An id whose ranks always connect over TCP, even threads of this JVM: tests of the network path. */
    byte[] newNetworkUniqueId() {
        return newUniqueId(false);
    }

    private byte[] newUniqueId(boolean allowLocal) {
        return newUniqueId(random, allowLocal);
    }

    /** A new id whose root is in this process; see {@link #newUniqueId()}. */
    static byte[] newUniqueId(SecureRandom random, boolean allowLocal) {
        byte[] id = new byte[UNIQUE_ID_BYTES];
        random.nextBytes(id);
        byte[] token = new byte[HostUniqueId.TOKEN_BYTES];
        random.nextBytes(token);
        try {
            return BootstrapRoot.open(token, allowLocal).id().encode(id);
        } catch (RuntimeException e) {
            if (!allowLocal) throw e;
            LOG.warn("jccl host backend: cannot open a bootstrap listener ({}); this unique id works within this JVM only", e.toString());
            return id;
        }
    }

    /**
     * Joins the communicator of {@code uniqueId}; blocks (on the launch thread) until all ranks joined. Ranks that
     * are all threads of the id's JVM share memory ({@link LocalClique}); otherwise they connect over TCP
     * ({@link NetworkClique}).
     */
    @Override
    public DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config) {
        return join(nranks, uniqueId, rank);
    }

    /** {@link #initRank} without the driver: also how a split across processes joins its new communicator. */
    static HostComm join(int nranks, byte[] uniqueId, int rank) {
        if (nranks <= 0 || rank < 0 || rank >= nranks) throw new InvalidArgumentException("rank " + rank + " of " + nranks);
        HostUniqueId networked = HostUniqueId.decode(uniqueId);
        if (networked != null) {
            BootstrapRoot root = BootstrapRoot.find(networked);
            if (root != null && root.allowsLocal()) {
                Object decided = awaitLocal(root.joinLocal(nranks, rank));
                if (decided instanceof HostComm comm) return comm;
                return NetworkInit.join(networked, nranks, rank, root);
            }
            if (root != null || !BootstrapRoot.madeHere(networked)) return NetworkInit.join(networked, nranks, rank, null);
        }
        String key = "init#" + HexFormat.of().formatHex(uniqueId);
        Object mine = CREATION.meet(key, nranks, rank, new long[0], all -> {
            LocalClique clique = new LocalClique(nranks);
            Meetings control = new Meetings();
            Map<Integer, Object> out = new java.util.HashMap<>();
            for (int r = 0; r < nranks; r++) out.put(r, new HostComm(clique, control, r));
            return out;
        }, HostComm.initTimeout());
        return (HostComm) mine;
    }

    private static Object awaitLocal(java.util.concurrent.CompletableFuture<Object> decision) {
        try {
            return decision.get(HostComm.initTimeout().toNanos() + 1_000_000_000L, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new org.jccl.core.error.SystemErrorException("the other ranks did not arrive within " + HostComm.initTimeout()
                    + " (jccl.host.initTimeout)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new org.jccl.core.error.SystemErrorException("interrupted while waiting for the other ranks");
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) throw re;
            throw new org.jccl.core.error.SystemErrorException("communicator creation failed: " + e.getCause());
        }
    }

    /** As {@link #initRank}, keyed by the first id (every rank passes the same list). */
    @Override
    public DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config) {
        if (uniqueIds.isEmpty()) throw new InvalidArgumentException("at least one unique id is needed");
        return initRank(nranks, uniqueIds.get(0), rank, device, config);
    }

    @Override
    public List<DriverComm> initAll(int[] devices) {
        if (devices.length == 0) throw new InvalidArgumentException("initAll needs at least one rank");
        LocalClique clique = new LocalClique(devices.length);
        Meetings control = new Meetings();
        List<DriverComm> out = new ArrayList<>();
        for (int r = 0; r < devices.length; r++) out.add(new HostComm(clique, control, r));
        return out;
    }

    // ---- operations

    @Override
    public void groupStart() {
        HostGroup.current().start();
    }

    @Override
    public void groupEnd() {
        HostGroup.current().end();
    }

    @Override
    public float groupSimulateEnd() {
        return HostGroup.current().simulateEnd();
    }

    @Override
    public void launch(DriverComm comm, LaunchOp operation, DriverStream stream) {
        if (!(comm instanceof HostComm hc)) throw new InvalidArgumentException(comm + " is not a host communicator");
        if (hc.isDestroyed()) throw new InvalidArgumentException(comm + " was destroyed");
        Reduction reduction = operation.reduction() == LaunchOp.NO_REDUCTION ? null : hc.reduction(operation.reduction(), operation.type());
        HostOp op = new HostOp(hc, operation, reduction);
        HostStream s = HostStream.of(stream);
        HostGroup group = HostGroup.current();
        if (group.active()) {
            group.add(s, op);
        } else {
            List<HostOp> single = List.of(op);
            s.enqueue(() -> OpRunner.run(single));
        }
    }

    @Override
    public @Nullable String resultString(int code) {
        return switch (code) {
            case Errors.SUCCESS -> "no error";
            case Errors.INTERNAL_ERROR -> "internal error in the host backend";
            case Errors.INVALID_ARGUMENT -> "invalid argument";
            case Errors.INVALID_USAGE -> "invalid usage (the ranks disagree on an operation)";
            case Errors.REMOTE_ERROR -> "remote process exited or there was a network error (another rank failed or aborted)";
            case Errors.SYSTEM_ERROR -> "system error";
            default -> null;
        };
    }

    private static HostMemoryBlock host(MemoryBlock block) {
        if (block instanceof HostMemoryBlock h) return h;
        throw new InvalidArgumentException(block + " is not host-backend memory");
    }

    private static void checkRange(HostMemoryBlock b, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > b.size() - bytes) {
            throw new InvalidArgumentException("range [" + offset + ", +" + bytes + ") is outside a block of " + b.size() + " bytes");
        }
        if (b.isFreed()) throw new InvalidArgumentException("the memory was freed");
    }
}
