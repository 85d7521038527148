package org.jccl.core;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.Errors;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.MemoryBlock;
import org.jspecify.annotations.Nullable;

/**
 * A driver whose events complete only when a test says so, to test the engine exactly: which events the event
 * thread queries, in which order works complete, what happens on timeouts, aborts and async errors.
 */
final class ScriptedDriver extends NoLibraryDriver {
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
    /** When set, every launch and every copy throws it, as a library or runtime call that fails. */
    volatile @Nullable RuntimeException launchFailure;
    /** {@code ncclGroupStart} and {@code ncclGroupEnd} calls. */
    final AtomicInteger groupStarts = new AtomicInteger();
    final AtomicInteger groupEnds = new AtomicInteger();
    /** Events created (the engine pools them). */
    final AtomicInteger eventsCreated = new AtomicInteger();
    /** The stream each recording was made on: event handle to stream handle. */
    final Map<Long, Long> recordedOn = new ConcurrentHashMap<>();
    /** The stream made to wait for each recording: event handle to stream handle. */
    final Map<Long, Long> waitedOn = new ConcurrentHashMap<>();
    /** Communicators finalized, destroyed and revoked by the library. */
    final AtomicInteger finalized = new AtomicInteger();
    final AtomicInteger destroyed = new AtomicInteger();
    final AtomicInteger revoked = new AtomicInteger();
    /** When set, the library's abort completes every event recorded so far, as NCCL's ends the kernels in flight. */
    volatile boolean abortEndsWork;
    /** When set, the library's abort blocks until it opens, like an {@code ncclCommAbort} that hangs. */
    volatile java.util.concurrent.CountDownLatch abortGate;
    /** The optional library functions this driver claims (none unless a test adds them). */
    volatile Set<String> functions = Set.of();
    /** Operations the "library" lacks: {@link #checkSupported} refuses them. */
    final Set<OpKind> unsupported = ConcurrentHashMap.newKeySet();
    /** When set, {@link #rejects} refuses every reduction with this reason. */
    volatile @Nullable String rejection;
    /** What communicators say they wait for ({@code DriverComm.waitingFor}); null: nothing they can name. */
    volatile @Nullable String waitingFor;
    /** When set, asking a communicator what it waits for throws it. */
    volatile @Nullable RuntimeException waitingForFailure;
    /** When set, destroying a communicator throws it, as an {@code ncclCommDestroy} that fails. */
    volatile @Nullable RuntimeException destroyFailure;
    /** Streams destroyed, by handle. */
    final Set<Long> destroyedStreams = ConcurrentHashMap.newKeySet();

    ScriptedDriver() {
        super("scripted", 1 << 20);
    }

    @Override
    protected void streamDestroyed(long handle) {
        destroyedStreams.add(handle);
    }

    @Override
    protected DriverComm comm(int rank, int size) {
        return new ScriptedComm(rank, size);
    }

    /** Blocks are on the device asked for, so validation of wrong-device buffers can be tested. */
    @Override
    protected int blockDevice(int device) {
        return device;
    }

    @Override
    protected void freed(MemoryBlock block) {
        freedBlocks.incrementAndGet();
    }

    @Override
    protected long newStreamHandle() {
        return handles.incrementAndGet();
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
    public void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
        RuntimeException failure = launchFailure;
        if (failure != null) throw failure;
    }

    @Override
    protected void waited(long streamHandle, DriverEvent event) {
        waitedOn.put(event.handle(), streamHandle);
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        eventsCreated.incrementAndGet();
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
            recordedOn.put(current, stream.handle());
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
    public DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config) {
        awaitGate(initGate);
        return super.initRank(nranks, uniqueId, rank, device, config);
    }

    @Override
    public void groupStart() {
        groupStarts.incrementAndGet();
    }

    @Override
    public void groupEnd() {
        groupEnds.incrementAndGet();
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
            RuntimeException failure = launchFailure;
            if (failure != null) throw failure;
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

    final class ScriptedComm extends Comm {
        ScriptedComm(int rank, int size) {
            super(rank, size);
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
            finalized.incrementAndGet();
        }

        @Override
        public void destroy() {
            RuntimeException failure = destroyFailure;
            if (failure != null) throw failure;
            destroyed.incrementAndGet();
        }

        @Override
        public @Nullable String waitingFor() {
            RuntimeException failure = waitingForFailure;
            if (failure != null) throw failure;
            return waitingFor;
        }

        @Override
        public void abort() {
            abortCalled = true;
            if (abortEndsWork) done.addAll(events.keySet());
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
            revoked.incrementAndGet();
        }

        @Override
        public byte[] growUniqueId() {
            return new byte[UniqueId.BYTES];
        }

        @Override
        public DriverComm grow(int newSize, byte @Nullable [] uniqueId, CommConfig config) {
            return comm(rank(), newSize);
        }
    }
}
