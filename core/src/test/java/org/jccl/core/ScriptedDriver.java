package org.jccl.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.Errors;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * A driver whose events complete only when a test says so, to test the engine exactly: which events the event
 * thread queries, in which order works complete, what happens on timeouts, aborts and async errors.
 */
final class ScriptedDriver implements Driver {
    /** Every operation launched, in launch order. */
    final List<LaunchOp> launched = new CopyOnWriteArrayList<>();
    /** Every event handle passed to pollEvents, in order. */
    final List<Long> queried = new CopyOnWriteArrayList<>();
    final AtomicInteger pollCalls = new AtomicInteger();
    /** The most events queried in one pollEvents call. */
    final AtomicInteger largestPoll = new AtomicInteger();
    final AtomicInteger freedBlocks = new AtomicInteger();
    /** Events recorded, by handle; a test completes them. */
    final Map<Long, ScriptedEvent> events = new ConcurrentHashMap<>();
    final Set<Long> done = ConcurrentHashMap.newKeySet();
    private final AtomicLong handles = new AtomicLong(1000);
    private final AtomicLong addresses = new AtomicLong(1 << 20);
    volatile int asyncError = Errors.SUCCESS;
    volatile boolean abortCalled;
    /** When set, launches block until it opens, like a first collective waiting for a peer to connect. */
    volatile java.util.concurrent.CountDownLatch launchGate;
    /** Launches inside {@link #launch} now (blocked at the gate or not). */
    final AtomicInteger launching = new AtomicInteger();
    /** When set, communicators say their async error must not be queried during a launch, as NCCL's non-blocking ones. */
    volatile boolean asyncErrorUnsafeDuringLaunch;
    /** Async-error queries made while a launch was inside the library. */
    final AtomicInteger asyncErrorQueriesDuringLaunch = new AtomicInteger();
    /** When set, every event completes as soon as it is recorded (for tests' clean-up). */
    volatile boolean autoComplete;
    /** When set, creating a communicator blocks until it opens, like a blocking init whose peers have not come. */
    volatile java.util.concurrent.CountDownLatch initGate;
    /** When set, the library's abort blocks until it opens, like an {@code ncclCommAbort} that hangs. */
    volatile java.util.concurrent.CountDownLatch abortGate;
    /** The optional library functions this driver claims (none unless a test adds them). */
    volatile Set<String> functions = Set.of();
    /** Operations the "library" lacks: {@link #checkSupported} refuses them. */
    final Set<OpKind> unsupported = ConcurrentHashMap.newKeySet();
    /** When set, {@link #rejects} refuses every reduction with this reason. */
    volatile @Nullable String rejection;

    /** Like the host backend: ranks on device -1. */
    @Override
    public boolean hasDevices() {
        return false;
    }

    @Override
    public BackendKind kind() {
        return BackendKind.HOST;
    }

    @Override
    public String describe() {
        return "scripted test driver";
    }

    @Override
    public int version() {
        return 22809;
    }

    @Override
    public Features features() {
        return new Features("scripted", "2.28.9", functions);
    }

    @Override
    public int deviceCount() {
        return 1;
    }

    @Override
    public DeviceInfo deviceInfo(int device) {
        return new DeviceInfo(device, "scripted", 0, 0, 0, 0, "");
    }

    @Override
    public void setDevice(int device) {
    }

    @Override
    public MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        long address = addresses.getAndAdd((bytes + 4095) / 4096 * 4096 + 4096);
        // Blocks are on the device asked for, so validation of wrong-device buffers can be tested.
        return new MemoryBlock(address, bytes, device, kind) {
            @Override
            public ByteBuffer hostView() {
                return null;
            }

            @Override
            protected void free() {
                freedBlocks.incrementAndGet();
            }
        };
    }

    @Override
    public void write(MemoryBlock dst, long offset, ByteBuffer src) {
    }

    @Override
    public void read(MemoryBlock src, long offset, ByteBuffer dst) {
    }

    @Override
    public void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
    }

    @Override
    public void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream) {
    }

    @Override
    public DriverStream createStream(int device) {
        long h = handles.incrementAndGet();
        return new DriverStream() {
            @Override
            public int device() {
                return DriverConstants.HOST_DEVICE;
            }

            @Override
            public long handle() {
                return h;
            }

            @Override
            public void waitEvent(DriverEvent event) {
            }

            @Override
            public void synchronize() {
            }

            @Override
            public void destroy() {
            }
        };
    }

    @Override
    public DriverStream wrapStream(int device, long handle) {
        return createStream(device);
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        return new ScriptedEvent(device);
    }

    /** The handle of the event most recently recorded. */
    long lastRecorded() {
        return lastRecorded.get();
    }

    private final AtomicLong lastRecorded = new AtomicLong();

    /** An event that re-records with a new handle each time, so a test can name each recording. */
    final class ScriptedEvent implements DriverEvent {
        private final int device;
        volatile long current;

        ScriptedEvent(int device) {
            this.device = device;
        }

        @Override
        public int device() {
            return device;
        }

        @Override
        public long handle() {
            return current;
        }

        @Override
        public void record(DriverStream stream) {
            current = handles.incrementAndGet();
            events.put(current, this);
            if (autoComplete) done.add(current);
            lastRecorded.set(current);
        }

        @Override
        public int query() {
            return done.contains(current) ? DriverConstants.EVENT_DONE : DriverConstants.EVENT_PENDING;
        }

        @Override
        public void synchronize() {
        }

        @Override
        public float elapsedMillisSince(DriverEvent start) {
            return 0;
        }

        @Override
        public void destroy() {
        }
    }

    @Override
    public void pollEvents(DriverEvent[] polled, int n, int[] status) {
        pollCalls.incrementAndGet();
        largestPoll.accumulateAndGet(n, Math::max);
        for (int i = 0; i < n; i++) {
            long h = polled[i].handle();
            queried.add(h);
            status[i] = done.contains(h) ? DriverConstants.EVENT_DONE : DriverConstants.EVENT_PENDING;
        }
    }

    @Override
    public void checkSupported(OpKind kind) {
        if (unsupported.contains(kind)) {
            throw new UnsupportedFeatureException(kind.method(), "scripted", "2.28.9", null);
        }
    }

    @Override
    public @Nullable String rejects(DataType type, int reduction, int nranks) {
        return rejection;
    }

    @Override
    public String runtimeErrorString(int code) {
        return "scripted error " + code;
    }

    @Override
    public byte[] newUniqueId() {
        return new byte[UniqueId.BYTES];
    }

    @Override
    public DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config) {
        awaitGate(initGate);
        return new ScriptedComm(rank, nranks);
    }

    @Override
    public DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config) {
        return new ScriptedComm(rank, nranks);
    }

    @Override
    public List<DriverComm> initAll(int[] devices) {
        List<DriverComm> comms = new ArrayList<>();
        for (int i = 0; i < devices.length; i++) comms.add(new ScriptedComm(i, devices.length));
        return comms;
    }

    @Override
    public void groupStart() {
    }

    @Override
    public void groupEnd() {
    }

    @Override
    public float groupSimulateEnd() {
        return 1.5f;
    }

    @Override
    public void launch(DriverComm comm, LaunchOp operation, DriverStream stream) {
        launching.incrementAndGet();
        try {
            awaitGate(launchGate);
            launched.add(operation);
        } finally {
            launching.decrementAndGet();
        }
    }

    private static void awaitGate(java.util.concurrent.CountDownLatch gate) {
        if (gate == null) return;
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String resultString(int code) {
        return Errors.resultName(code);
    }

    final class ScriptedComm implements DriverComm {
        private final int rank;
        private final int size;

        ScriptedComm(int rank, int size) {
            this.rank = rank;
            this.size = size;
        }

        @Override
        public int rank() {
            return rank;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public int device() {
            return DriverConstants.HOST_DEVICE;
        }

        @Override
        public int asyncError() {
            if (launching.get() > 0) asyncErrorQueriesDuringLaunch.incrementAndGet();
            return asyncError;
        }

        @Override
        public boolean asyncErrorSafeDuringLaunch() {
            return !asyncErrorUnsafeDuringLaunch;
        }

        @Override
        public String lastError() {
            return "scripted last error";
        }

        @Override
        public void finalizeComm() {
        }

        @Override
        public void destroy() {
        }

        @Override
        public void abort() {
            abortCalled = true;
            awaitGate(abortGate);
        }

        @Override
        public void suspend(int flags) {
        }

        @Override
        public void resume() {
        }

        @Override
        public CommMemoryStats memStats() {
            return new CommMemoryStats(0, false, 0, 0);
        }

        @Override
        public void revoke(int flags) {
        }

        @Override
        public byte[] growUniqueId() {
            return new byte[UniqueId.BYTES];
        }

        @Override
        public DriverComm grow(int newSize, byte @org.jspecify.annotations.Nullable [] uniqueId, CommConfig config) {
            return new ScriptedComm(rank, newSize);
        }

        @Override
        public DriverComm split(int color, int key, CommConfig config) {
            return color == DriverConstants.SPLIT_NO_COLOR ? null : new ScriptedComm(0, 1);
        }

        @Override
        public DriverComm shrink(int[] excludedRanks, CommConfig config) {
            return new ScriptedComm(0, size - excludedRanks.length);
        }

        @Override
        public long register(MemoryBlock block, long offset, long bytes) {
            return 1;
        }

        @Override
        public void deregister(long handle) {
        }

        @Override
        public int createPreMulSum(double hostScalar, MemoryBlock deviceScalar, long deviceScalarOffset, DataType type) {
            return 5;
        }

        @Override
        public void destroyReduceOp(int code) {
        }
    }
}
