package org.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.engine.EventPool;
import org.jccl.core.engine.StreamQueue;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.jfr.JfrEvents;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.ForeignOwner;
import org.jccl.core.spi.KernelRuntime;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.thread.Backoff;
import org.jccl.core.thread.SerialWorker;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loaded backend (NCCL, RCCL or host): its devices, memory, streams and events, and communicator creation.
 * Obtained from {@link Jccl#backend()}; one instance per kind per process.
 *
 * <p>Communicator creation returns a future and never blocks the caller: blocking creation runs on the new
 * communicator's launch thread; non-blocking creation ({@code CommConfig.builder().blocking(false)}) is polled
 * to completion by the event thread.
 */
public final class Backend {
    private static final Logger LOG = LoggerFactory.getLogger(Backend.class);

    private final Driver driver;
    private final EventPool events;

    Backend(Driver driver) {
        this.driver = driver;
        this.events = new EventPool(driver);
        EventLoop loop = EventLoop.get();
        driver.onEventCompleted(loop::wake);
    }

    public BackendKind kind() {
        return driver.kind();
    }

    /** The loaded libraries and versions, e.g. {@code NCCL 2.28.9 (libnccl.so.2), CUDA runtime 13.0}. */
    public String describe() {
        return driver.describe();
    }

    /** The collective library's version as {@code NCCL_VERSION_CODE} (22809 for 2.28.9). */
    public int version() {
        return driver.version();
    }

    /** Which optional library functions are present. */
    public Features features() {
        return driver.features();
    }

    public int deviceCount() {
        return driver.deviceCount();
    }

    public DeviceInfo deviceInfo(int device) {
        checkDevice(device);
        return driver.deviceInfo(device);
    }

    // ---- memory, streams, events

    /** Device memory ({@code cudaMalloc}); on the host backend, aligned off-heap memory ({@code device} is ignored). */
    public Buffer allocate(int device, long bytes) {
        return allocate(device, bytes, MemoryKind.DEVICE);
    }

    /** Page-locked host memory, for asynchronous copies. */
    public Buffer allocatePinned(long bytes) {
        return allocate(DriverConstants.HOST_DEVICE, bytes, MemoryKind.PINNED_HOST);
    }

    /** Memory from {@code ncclMemAlloc}, as windows and registration prefer. */
    public Buffer allocateForCommunication(int device, long bytes) {
        driver.features().require(Feature.MEM_ALLOC);
        return allocate(device, bytes, MemoryKind.COMMUNICATION);
    }

    /**
     * A buffer over {@code byteSize} bytes at {@code address} that another library allocated — a tensor of PyTorch,
     * ONNX Runtime or TensorRT, a KV-cache pool, memory from JavaCPP — used in place, without a copy. Every operation,
     * window registration and kernel argument accepts it like memory jccl allocated. jccl never frees it:
     * {@code owner}, the object that owns the memory (the tensor, the JavaCPP {@code Pointer}, the direct
     * {@code ByteBuffer}), is kept reachable until the buffer is closed and every operation that used it completed, so
     * the garbage collector cannot free the memory under a running operation. An owner that is a JavaCPP
     * {@code Pointer} deallocated meanwhile makes later operations fail with {@code InvalidUsageException} before
     * anything is enqueued. For DLPack tensors see {@link Dlpack}.
     *
     * @param device   the GPU the memory is on (a device pointer); ignored on the host backend, whose memory is host
     *                 memory at a CPU address
     * @param address  the first byte
     * @param byteSize how many bytes, at least one
     * @param owner    what owns the memory
     * @throws InvalidArgumentException for a null address, a size below one byte or past the address space, or a
     *                                  device that does not exist
     */
    public Buffer wrap(int device, long address, long byteSize, Object owner) {
        Errors.requireArgument(owner, "owner");
        return wrapForeign(device, address, byteSize, ForeignOwners.keepAlive(owner));
    }

    /**
     * {@link #wrap(int, long, long, Object)} for memory whose owner must be told when jccl is done with it:
     * {@code release} runs once, after the buffer was closed and every operation that used it completed, on the thread
     * that ended the last use — often jccl's event thread, so it must be short and must not block (hand slow work to an
     * executor). What it throws is logged.
     */
    public Buffer wrapWithRelease(int device, long address, long byteSize, Runnable release) {
        Errors.requireArgument(release, "release");
        return wrapForeign(device, address, byteSize, ForeignOwners.callback(release));
    }

    /** The checked form of both wraps; also DLPack's way in. */
    Buffer wrapForeign(int device, long address, long byteSize, ForeignOwner owner) {
        if (address == 0) throw new InvalidArgumentException("cannot wrap memory at address 0 (a null pointer)");
        if (byteSize <= 0) throw new InvalidArgumentException("wrapped memory must hold at least one byte, not " + byteSize);
        if (Long.compareUnsigned(address + (byteSize - 1), address) < 0) {
            throw new InvalidArgumentException(byteSize + " bytes at 0x" + Long.toHexString(address) + " pass the end of the address space");
        }
        checkDevice(device);
        int on = driver.hasDevices() ? device : DriverConstants.HOST_DEVICE;
        return new Buffer(driver, driver.wrap(on, address, byteSize, owner));
    }

    private Buffer allocate(int device, long bytes, MemoryKind memoryKind) {
        if (bytes <= 0) throw new InvalidArgumentException("allocation size must be positive, not " + bytes);
        if (memoryKind != MemoryKind.PINNED_HOST) checkDevice(device);
        return new Buffer(driver, driver.allocate(device, bytes, memoryKind));
    }

    public Stream createStream(int device) {
        checkDevice(device);
        return new Stream(this, newStreamQueue(driver.createStream(device)), null);
    }

    /** Wraps another library's stream ({@code cudaStream_t}); closing the wrapper leaves the stream alone. */
    public Stream wrapStream(int device, long handle) {
        checkDevice(device);
        return new Stream(this, newStreamQueue(driver.wrapStream(device, handle)), null);
    }

    public Event createEvent(int device, boolean timing) {
        checkDevice(device);
        return new Event(driver.createEvent(device, timing));
    }

    // ---- communicators

    /** {@code ncclGetUniqueId}: made by one rank and given to all before {@link #initRank}. */
    public UniqueId newUniqueId() {
        return UniqueId.fromBytes(driver.newUniqueId());
    }

    /** {@code ncclCommInitRankConfig}. The future completes when the communicator is ready on this rank. */
    public CompletableFuture<Communicator> initRank(UniqueId id, int nranks, int rank, int device, CommConfig config,
                                                    CommOptions options) {
        Errors.requireArgument(id, "id");
        Errors.requireArgument(config, "config");
        Errors.requireArgument(options, "options");
        checkRanks(nranks, rank);
        checkDevice(device);
        byte[] bytes = id.toBytes();
        return create("initRank", idLabel(id), device, rank, nranks, config, options,
                () -> driver.initRank(nranks, bytes, rank, device, config));
    }

    /** {@link #initRank} with the default configuration and options. */
    public CompletableFuture<Communicator> initRank(UniqueId id, int nranks, int rank, int device) {
        return initRank(id, nranks, rank, device, CommConfig.DEFAULT, CommOptions.defaults());
    }

    /** {@code ncclCommInitRankScalable}: several unique ids spread the bootstrap of large jobs. */
    public CompletableFuture<Communicator> initRankScalable(List<UniqueId> ids, int nranks, int rank, int device,
                                                            CommConfig config, CommOptions options) {
        Errors.requireArgument(ids, "ids");
        if (ids.isEmpty()) throw new InvalidArgumentException("initRankScalable needs at least one unique id");
        checkRanks(nranks, rank);
        checkDevice(device);
        driver.features().require(Feature.COMM_INIT_RANK_SCALABLE);
        List<byte[]> bytes = new ArrayList<>();
        for (UniqueId id : ids) bytes.add(Errors.requireArgument(id, "id").toBytes());
        return create("initRankScalable", idLabel(ids.get(0)), device, rank, nranks, config, options,
                () -> driver.initRankScalable(nranks, rank, bytes, device, config));
    }

    /**
     * {@code ncclCommInitAll}: one communicator per device, all in this process (rank {@code i} on
     * {@code devices[i]}). On the host backend, pass any devices: one rank is made per entry.
     */
    public CompletableFuture<List<Communicator>> initAll(int[] devices, CommOptions options) {
        Errors.requireArgument(devices, "devices");
        Errors.requireArgument(options, "options");
        if (devices.length == 0) throw new InvalidArgumentException("initAll needs at least one device");
        int[] devs = devices.clone();
        for (int d : devs) checkDevice(d);
        CompletableFuture<List<Communicator>> result = new CompletableFuture<>();
        String id = Integer.toHexString(System.identityHashCode(result) & 0xffff);
        JfrEvents.lifecycle(id, -1, devs.length, "initAll", null, result);
        Thread creator = new Thread(() -> {
            try {
                List<DriverComm> comms = driver.initAll(devs);
                List<Communicator> out = new ArrayList<>();
                for (DriverComm dc : comms) out.add(new Communicator(this, dc, id, options, launchQueue(id, dc.rank(), dc.device())));
                result.complete(List.copyOf(out));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }, "jccl-init-all");
        creator.setDaemon(true);
        creator.start();
        return result;
    }

    /** {@code initAll} over devices 0..n-1 (n host ranks on the host backend), default options. */
    public CompletableFuture<List<Communicator>> initAll(int n) {
        if (n <= 0) throw new InvalidArgumentException("initAll needs at least one rank, not " + n);
        int[] devices = new int[n];
        for (int i = 0; i < n; i++) devices[i] = driver.hasDevices() ? i : DriverConstants.HOST_DEVICE;
        return initAll(devices, CommOptions.defaults());
    }

    /**
     * This backend's kernels (loading code images, launching them, the run-time compiler), for modules such as the
     * device API; opened on first use.
     *
     * @throws org.jccl.core.error.UnsupportedFeatureException on the host backend, or without a loadable driver API
     */
    public KernelRuntime kernels() {
        return driver.kernels();
    }

    /** The file the collective library was loaded from, or null (host backend). */
    public @Nullable String libraryFile() {
        return driver.libraryFile();
    }

    // ---- engine side

    Driver driver() {
        return driver;
    }

    /** The engine's side of a stream of this backend. */
    StreamQueue newStreamQueue(DriverStream stream) {
        return new StreamQueue(stream, driver, events);
    }

    /** The event thread of this process, e.g. for measuring its CPU time. */
    public Thread eventThread() {
        return EventLoop.get().thread();
    }

    /** How many works the event thread has seen complete since the process started. */
    public long completedWorkCount() {
        return EventLoop.get().completedCount();
    }

    /**
     * How many times a completion callback held the event thread longer than {@code jccl.eventThread.stallWarning}
     * (each is logged with the stack where it was stuck).
     */
    public long eventThreadStallCount() {
        return EventLoop.get().stallCount();
    }

    private interface Creation {
        DriverComm create();
    }

    /** @param call what the application called, as a recorded event names it ({@code initRank}) */
    private CompletableFuture<Communicator> create(String call, String id, int device, int rank, int nranks,
                                                   CommConfig config, CommOptions options, Creation creation) {
        SerialWorker queue = launchQueue(id, rank, device);
        CompletableFuture<Communicator> result = new CompletableFuture<>();
        CompletableFuture<Communicator> handedOut = failAfterTimeout(result, id, rank, nranks);
        JfrEvents.lifecycle(id, rank, nranks, call, null, handedOut);
        queue.submit(() -> {
            try {
                DriverComm dc = creation.create();
                if (result.isDone()) abandon(dc, queue); // it timed out while the library was creating it
                else whenReady(dc, id, config, options, queue, result);
            } catch (Throwable t) {
                queue.stop();
                result.completeExceptionally(t);
            }
        });
        return handedOut;
    }

    /**
     * A creation still under way after {@code jccl.initTimeout} (a rank that never joins) fails, typed, instead of
     * waiting forever; what the library makes afterwards, or is still making, is aborted. Returns the future to hand
     * out; {@code result} is done once it timed out (its timer is cancelled when it completes first).
     */
    private static CompletableFuture<Communicator> failAfterTimeout(CompletableFuture<Communicator> result, String id,
                                                                    int rank, int nranks) {
        Duration limit = JcclSettings.initTimeout();
        if (limit.isZero()) return result;
        CompletableFuture<Communicator> handedOut = result.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .exceptionallyCompose(e -> CompletableFuture.failedFuture(e instanceof TimeoutException
                        ? creationTimedOut(id, rank, nranks, limit) : e));
        // Cancelling what the caller holds cancels the creation too: what the library makes afterwards is aborted.
        handedOut.whenComplete((c, e) -> {
            if (handedOut.isCancelled()) result.cancel(false);
        });
        return handedOut;
    }

    private static WorkTimeoutException creationTimedOut(String id, int rank, int nranks, Duration limit) {
        String usualCause = "check that every rank joins with the same id";
        JfrEvents.timeout(id, rank, nranks, -1, "creation", limit.toNanos(), usualCause, true);
        return new WorkTimeoutException("[comm=" + id + " rank=" + rank + "] creation still not done after " + limit
                + " (jccl.initTimeout): " + usualCause);
    }

    /** A communicator nobody will receive: the library's abort, on its launch thread, which then ends. */
    private static void abandon(DriverComm dc, SerialWorker queue) {
        queue.submit(dc::abort);
        queue.stop();
    }

    /** A communicator made by split or shrink of another. */
    CompletableFuture<Communicator> adopt(DriverComm dc, String id, CommConfig config, CommOptions options) {
        CompletableFuture<Communicator> result = new CompletableFuture<>();
        SerialWorker queue = launchQueue(id, dc.rank(), dc.device());
        CompletableFuture<Communicator> handedOut = failAfterTimeout(result, id, dc.rank(), dc.size());
        whenReady(dc, id, config, options, queue, result);
        return handedOut;
    }

    /** Completes {@code result} now (blocking creation) or when the event thread sees creation finish. */
    private void whenReady(DriverComm dc, String id, CommConfig config, CommOptions options, SerialWorker queue,
                           CompletableFuture<Communicator> result) {
        if (config.isBlocking() || dc.asyncError() == Errors.SUCCESS) {
            deliver(new Communicator(this, dc, id, options, queue), result);
            return;
        }
        EventLoop.get().watch(() -> {
            if (result.isDone()) { // timed out while the library was still creating it
                abandon(dc, queue);
                return true;
            }
            int code = dc.asyncError();
            if (code == Errors.IN_PROGRESS) return false;
            if (code == Errors.SUCCESS) {
                try {
                    deliver(new Communicator(this, dc, id, options, queue), result);
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            } else {
                JcclException e = Errors.fromResult("non-blocking communicator creation", code,
                        driver.resultString(code), dc.lastError(), null);
                LOG.error("[comm={} rank={}] creation failed: {}", id, dc.rank(), e.getMessage());
                abandon(dc, queue);
                result.completeExceptionally(e);
            }
            return true;
        });
    }

    /** Hands the communicator over, or aborts it if the creation timed out meanwhile (nobody else holds it). */
    private static void deliver(Communicator c, CompletableFuture<Communicator> result) {
        if (!result.complete(c)) c.abort();
    }

    private SerialWorker launchQueue(String id, int rank, int device) {
        return new SerialWorker("jccl-launch-" + id + "-r" + rank, () -> driver.setDevice(device),
                Backoff.ENGINE);
    }

    private static String idLabel(UniqueId id) {
        return String.format("%04x", id.hashCode() & 0xffff);
    }

    private void checkRanks(int nranks, int rank) {
        if (nranks <= 0) throw new InvalidArgumentException("nranks must be positive, not " + nranks);
        if (rank < 0 || rank >= nranks) throw new InvalidArgumentException("rank " + rank + " is outside 0.." + (nranks - 1));
    }

    private void checkDevice(int device) {
        if (!driver.hasDevices()) return;
        int n = driver.deviceCount();
        if (device < 0 || device >= n) {
            throw new InvalidArgumentException("device " + device + " does not exist: " + n + " device(s) present");
        }
    }

    @Override
    public String toString() {
        return "Backend[" + describe() + "]";
    }
}
