package org.jccl.rma.kv;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.Feature;
import org.jccl.rma.OneSided;
import org.jccl.rma.SymmetricPool;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's paged KV-cache pool on a communicator, with the staging area the staged paths move data through, in one
 * memory window where the library has windows (so a peer's kernel or put can reach it). Allocated collectively: every
 * rank of the communicator calls {@link #allocate}, each with its own layout, and the window gets the largest size
 * any rank needs (windows have one size on every rank). Also opens, collectively, the direct paths that providers
 * offer (the LSA kernel path of {@code device-api}).
 *
 * <p>Layout on every rank, from where the pool starts in its window ({@link #windowBase()}: 0 in a window of its own):
 * the pool ({@link KvLayout#offset}), then the staging area, then the layer signals: {@link #SIGNAL_ROWS} rows of one
 * 64-bit word per layer, zeroed here, where a direct path that signals layers on the device marks each layer of a
 * request landed (a receiver gives each request in flight a row of its own).
 *
 * <p>{@link #allocate(SymmetricPool, KvLayout, long)} places the pool in a {@link SymmetricPool} instead: no window
 * registration of its own, the same window as the model's collective buffers, at the same offset on every rank.
 */
public final class KvPool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvPool.class);
    /** Staging starts at a multiple of this, so that packed pieces stay aligned for vector copies. */
    private static final long STAGING_ALIGNMENT = 4096;
    /** Requests in flight to one receiver that can have layer signals at once: rows of the signal area. */
    static final int SIGNAL_ROWS = 256;
    /** Pools of this process by communicator id and rank: the ranks a {@link KvPathKind#COPY} copy may reach. */
    private static final Map<String, KvPool> IN_PROCESS = new ConcurrentHashMap<>();

    private final Communicator communicator;
    private final KvLayout layout;
    private final Buffer memory;
    private final @Nullable Window window;
    /** Where the pool starts in {@link #window}: the same on every rank. */
    private final long windowBase;
    /** Whether the window is the pool's own (closed with it) rather than a {@link SymmetricPool}'s. */
    private final boolean ownsWindow;
    private final long stagingOffset;
    private final long stagingBytes;
    private final long signalOffset;
    private final Map<KvPathKind, KvDirectPath> direct = new EnumMap<>(KvPathKind.class);
    private final Map<KvPathKind, String> unavailable = new EnumMap<>(KvPathKind.class);
    private final AtomicBoolean closed = new AtomicBoolean();

    private KvPool(Communicator communicator, KvLayout layout, Buffer memory, @Nullable Window window, long windowBase,
                   boolean ownsWindow, long stagingBytes) {
        this.communicator = communicator;
        this.layout = layout;
        this.memory = memory;
        this.window = window;
        this.windowBase = windowBase;
        this.ownsWindow = ownsWindow;
        this.stagingOffset = stagingOffset(layout);
        this.stagingBytes = stagingBytes;
        this.signalOffset = align(stagingOffset + stagingBytes);
    }

    /**
     * Allocates this rank's pool of {@code layout} and a staging area of {@code stagingBytes}, collectively: every rank
     * of {@code communicator} calls it, in the same order as its other collective calls.
     *
     * @param stagingBytes the staging area (0: none, so only direct paths); each staged piece is at most half of it
     */
    public static CompletableFuture<KvPool> allocate(Communicator communicator, KvLayout layout, long stagingBytes) {
        Errors.requireArgument(communicator, "communicator");
        long mine = bytesFor(layout, stagingBytes);
        return largestOnAnyRank(communicator, mine).thenCompose(largest -> {
            long size = largest[0];
            boolean windows = communicator.backend().features().has(Feature.COMM_WINDOW_REGISTER);
            OneSided rma = OneSided.of(communicator);
            if (!windows) {
                Buffer plain = communicator.backend().allocate(communicator.device(), size);
                return CompletableFuture.completedFuture(
                        new KvPool(communicator, layout, plain, null, 0, false, stagingBytes));
            }
            Buffer memory = rma.allocate(size);
            return rma.register(memory, WindowFlag.COLL_SYMMETRIC).handle((w, error) -> {
                if (error != null) {
                    memory.close();
                    throw Errors.unwrap(error);
                }
                return new KvPool(communicator, layout, memory, w, 0, true, stagingBytes);
            });
        }).thenCompose(KvPool::zeroSignals).thenCompose(KvPool::openDirectPaths);
    }

    /**
     * As {@link #allocate(Communicator, KvLayout, long)}, but in {@code symmetric}: carved out of its window, with no
     * registration of its own, so the KV cache and the model's collective buffers share one. Collective on the pool's
     * communicator, and an allocation of that pool: every rank calls it in the same order as its other allocations, so
     * that the KV pool lies at the same offset everywhere. Closing the KV pool gives its range back; close it before
     * {@code symmetric}.
     *
     * @throws InvalidUsageException (in the future) when the symmetric pool has no room, or when the ranks' pools
     *                               placed it at different offsets (their allocations differed); every rank then fails
     */
    public static CompletableFuture<KvPool> allocate(SymmetricPool symmetric, KvLayout layout, long stagingBytes) {
        Errors.requireArgument(symmetric, "symmetric");
        Communicator communicator = symmetric.window().communicator();
        long mine = bytesFor(layout, stagingBytes);
        return largestOnAnyRank(communicator, mine).thenCompose(largest -> {
            Buffer memory;
            try {
                memory = symmetric.allocate(largest[0]);
            } catch (InvalidUsageException full) { // no room: the others learn of it from the offset exchange below
                memory = null;
            }
            Buffer allocated = memory;
            long base = allocated == null ? -1 : symmetric.offsetOf(allocated);
            // Every rank must agree on the offset: the largest of (base, -base) is (max, -min).
            return largestOnAnyRank(communicator, base, -base).thenApply(range -> {
                if (range[0] == base && -range[1] == base && base >= 0) {
                    return new KvPool(communicator, layout, allocated, symmetric.window(), base, false, stagingBytes);
                }
                if (allocated != null) allocated.close();
                throw new InvalidUsageException(communicator.describe() + ": the KV pool of " + largest[0] + " bytes "
                        + (base < 0 ? "finds no room in " + symmetric : "lies at offset " + base + " of " + symmetric)
                        + (range[0] == base && -range[1] == base ? "" : ", but at offsets " + -range[1] + " to " + range[0]
                        + " on the ranks (or had no room on one): allocate the same sizes in the same order on every rank"));
            });
        }).thenCompose(KvPool::zeroSignals).thenCompose(KvPool::openDirectPaths);
    }

    /** What this rank's pool of {@code layout} and its staging area take, the layer signals included. */
    private static long bytesFor(KvLayout layout, long stagingBytes) {
        Errors.requireArgument(layout, "layout");
        if (stagingBytes < 0) throw new InvalidArgumentException("stagingBytes must not be negative, not " + stagingBytes);
        return align(stagingOffset(layout) + stagingBytes) + signalBytes(layout);
    }

    private static long stagingOffset(KvLayout layout) {
        return align(layout.poolBytes());
    }

    private static long signalBytes(KvLayout layout) {
        return 8L * SIGNAL_ROWS * layout.layers();
    }

    /** Zeroes the layer signals, on the stream before anything a peer could learn of this pool. */
    private CompletableFuture<KvPool> zeroSignals() {
        return communicator.stream().fill(memory.slice(signalOffset, signalBytes(layout)), 0, signalBytes(layout))
                .thenApply(v -> this);
    }

    private static long align(long bytes) {
        return (bytes + STAGING_ALIGNMENT - 1) / STAGING_ALIGNMENT * STAGING_ALIGNMENT;
    }

    /** An all-reduce of {@code mine} with max: e.g. the window size every rank registers. */
    private static CompletableFuture<long[]> largestOnAnyRank(Communicator communicator, long... mine) {
        int n = mine.length;
        Buffer device = communicator.backend().allocate(communicator.device(), 8L * n);
        Buffer host = communicator.backend().allocatePinned(8L * n);
        device.write(0, mine);
        Work reduced = communicator.allReduce(device, device, n, DataType.INT64, ReduceOp.MAX);
        Work copied = communicator.stream().copy(host, device, 8L * n);
        return reduced.thenCombine(copied, (a, b) -> b)
                .thenApplyAsync(v -> host.readLongs(0, n)) // a host read, off the event thread
                .whenComplete((v, e) -> {
                    device.close();
                    host.close();
                });
    }

    /** Opens every provider's path, one after the other on every rank (the same order: each may be collective). */
    private CompletableFuture<KvPool> openDirectPaths() {
        IN_PROCESS.put(key(communicator.id(), communicator.rank()), this);
        CompletableFuture<KvPool> chain = CompletableFuture.completedFuture(this);
        List<KvPathProvider> providers = ServiceLoader.load(KvPathProvider.class, KvPool.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).sorted((a, b) -> a.kind().compareTo(b.kind())).toList();
        for (KvPathProvider p : providers) {
            chain = chain.thenCompose(pool -> p.open(pool).handle((path, error) -> {
                if (error != null) {
                    String why = Errors.unwrap(error).getMessage();
                    pool.unavailable.put(p.kind(), why);
                    LOG.debug("{} KV path {} unavailable: {}", communicator.describe(), p.kind(), why);
                } else {
                    pool.direct.put(p.kind(), path);
                }
                return pool;
            }));
        }
        return chain;
    }

    private static String key(String communicatorId, int rank) {
        return communicatorId + "/" + rank;
    }

    /** The pool of {@code rank} of this communicator, when that rank lives in this process. */
    @Nullable KvPool inProcessPeer(int rank) {
        return IN_PROCESS.get(key(communicator.id(), rank));
    }

    public Communicator communicator() {
        return communicator;
    }

    public KvLayout layout() {
        return layout;
    }

    /** The pool: {@link KvLayout#poolBytes()} bytes, block {@code b} of tensor {@code t} of layer {@code l} at {@link KvLayout#offset}. */
    public Buffer buffer() {
        return memory.slice(0, layout.poolBytes());
    }

    /** One tensor of one layer: {@code [blocks, tokensPerBlock, kvHeads, headDim]}. */
    public Buffer tensor(int layer, int tensor) {
        if (layer < 0 || layer >= layout.layers() || tensor < 0 || tensor >= layout.tensors()) {
            throw new InvalidArgumentException("no tensor " + tensor + " of layer " + layer + " in " + layout);
        }
        return memory.slice(layout.offset(layer, tensor, 0), layout.tensorBytes());
    }

    /** The window the pool lies in (at {@link #windowBase()}), or null where the library has no windows. */
    public @Nullable Window window() {
        return window;
    }

    /**
     * Where the pool starts in {@link #window()}, the same on every rank: 0 in a window of its own, its offset in a
     * {@link SymmetricPool}. Add it to a pool offset ({@link KvLayout#offset}) to get a window offset.
     */
    public long windowBase() {
        return windowBase;
    }

    /** The whole allocation: the pool, the staging area, the layer signals. */
    Buffer memory() {
        return memory;
    }

    long stagingOffset() {
        return stagingOffset;
    }

    long stagingBytes() {
        return stagingBytes;
    }

    /** Where signal row {@code row} starts in the window: layer {@code l}'s word is 8 l bytes further. */
    long signalOffset(int row) {
        return windowBase + signalOffset + 8L * row * layout.layers();
    }

    /** The direct path of {@code kind} opened on this pool, or null. */
    @Nullable KvDirectPath directPath(KvPathKind kind) {
        return direct.get(kind);
    }

    /** Why a provider's path is not open here, or null. */
    @Nullable String whyUnavailable(KvPathKind kind) {
        return unavailable.get(kind);
    }

    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Closes the direct paths and the window of its own (collective: every rank closes its pool), then frees the memory
     * once nothing issued before uses it (in a {@link SymmetricPool}: gives its range back). Close the senders and
     * receivers on it first.
     */
    public CompletableFuture<Void> closeAsync() {
        if (!closed.compareAndSet(false, true)) return CompletableFuture.completedFuture(null);
        IN_PROCESS.remove(key(communicator.id(), communicator.rank()), this);
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (KvDirectPath p : direct.values()) chain = chain.thenCompose(v -> p.closeAsync().exceptionally(e -> null));
        if (window != null && ownsWindow) chain = chain.thenCompose(v -> window.closeAsync().exceptionally(e -> null));
        return chain.whenComplete((v, e) -> memory.close());
    }

    /** {@link #closeAsync()}, waiting for it; never on jccl's event thread. */
    @Override
    public void close() {
        closeAsync().join();
    }

    @Override
    public String toString() {
        return "KvPool[" + layout + ", staging " + stagingBytes + " bytes, " + communicator.describe() + "]";
    }
}
