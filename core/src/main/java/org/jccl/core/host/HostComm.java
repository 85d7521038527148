package org.jccl.core.host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.core.spi.WaitDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * One rank of a host communicator. Its async error is set by the stream task that failed, before that task's
 * completion event can complete, so the engine never declares a failed operation successful.
 */
final class HostComm implements DriverComm, OneSidedComm {
    /** The first code {@code createPreMulSum} hands out: 0..4 are the built-in reductions. */
    private static final int FIRST_USER_OP = 5;

    private final HostTransport transport;
    private final Meetings control;
    private final int rank;
    private volatile int asyncError = Errors.SUCCESS;
    private volatile @Nullable String lastError;
    private final Map<Long, long[]> registrations = new ConcurrentHashMap<>();
    private final AtomicLong nextHandle = new AtomicLong(1);
    private final Map<Integer, Reduction> userOps = new ConcurrentHashMap<>();
    private final Map<Integer, DataType> userOpTypes = new ConcurrentHashMap<>();
    private int nextOpCode = FIRST_USER_OP;
    private int splits;
    private int shrinks;
    private long windowsRegistered;
    private volatile boolean destroyed;
    /** What the launch thread waits for in a collective set-up call now, for {@link #waitingFor()}; else null. */
    private volatile @Nullable Supplier<String> setUpWait;

    HostComm(HostTransport transport, Meetings control, int rank) {
        this.transport = transport;
        this.control = control;
        this.rank = rank;
    }

    HostTransport transport() {
        return transport;
    }

    /** Records the first failure of this rank; later ones keep the first code and text. */
    void fail(int code, String message) {
        synchronized (this) {
            if (asyncError != Errors.SUCCESS) return;
            lastError = message;
            asyncError = code;
        }
    }

    /** The reduction an operation names by its code: a built-in one or one of this rank's PreMulSums. */
    Reduction reduction(int code, DataType type) {
        if (code >= 0 && code < FIRST_USER_OP) return Reduction.builtIn(Reduction.Kind.values()[code]);
        Reduction r = userOps.get(code);
        if (r == null) throw new InvalidArgumentException("reduction code " + code + " is not defined on rank " + rank);
        if (userOpTypes.get(code) != type) {
            throw new InvalidArgumentException("reduction code " + code + " was created for " + userOpTypes.get(code) + ", not " + type);
        }
        return r;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return transport.size();
    }

    @Override
    public int device() {
        return DriverConstants.HOST_DEVICE;
    }

    @Override
    public int asyncError() {
        return asyncError;
    }

    @Override
    public @Nullable String lastError() {
        return lastError;
    }

    @Override
    public void finalizeComm() {
        // Stream order already flushes every operation before the engine calls this.
    }

    @Override
    public void destroy() {
        destroyed = true;
        control.leave(rank);
        transport.close(rank);
        registrations.clear();
        userOps.clear();
    }

    /** Poisons the clique: every rank blocked in or later entering an operation of it fails; nothing waits. */
    @Override
    public void abort() {
        destroyed = true;
        fail(Errors.REMOTE_ERROR, "rank " + rank + " aborted the communicator");
        transport.poison("rank " + rank + " aborted the communicator");
    }

    boolean isDestroyed() {
        return destroyed;
    }

    /**
     * A collective set-up call waiting for its peers (launch thread), then what the stream waits for: the ranks a
     * collective waits for, the peer of a send or receive, or a signal.
     */
    @Override
    public @Nullable String waitingFor() {
        Supplier<String> setUp = setUpWait;
        String call = setUp == null ? null : setUp.get();
        String stream = transport.waitingFor(rank);
        if (stream == null) stream = transport.windowsOf(rank).waitingFor();
        if (call == null) return stream;
        return stream == null ? call : call + "; and " + stream;
    }

    /** Why a meeting of this communicator (split, an exchange) cannot complete any more: it was poisoned. */
    private @Nullable RuntimeException abandonedBy() {
        String poison = transport.poisoned();
        return poison == null ? null : CliqueFailedException.poisoned(poison, transport.poisonCode()).asJccl();
    }

    @Override
    public @Nullable DriverComm split(int color, int key, CommConfig config) {
        if (color < 0 && color != DriverConstants.SPLIT_NO_COLOR) throw new InvalidArgumentException("color must be >= 0 or NO_COLOR, not " + color);
        String poison = transport.poisoned();
        if (poison != null) throw CliqueFailedException.poisoned(poison, transport.poisonCode()).asJccl();
        if (transport instanceof NetworkClique net) {
            try {
                return NetworkSplit.split(net, rank, color, key);
            } catch (CliqueFailedException e) {
                fail(e.resultCode(), "split failed: " + e.getMessage());
                throw e.asJccl();
            }
        }
        int n = size();
        Object mine = control.meet("split#" + (splits++), n, rank, new long[] {color, key}, all -> {
            Map<Integer, Object> out = new HashMap<>();
            Map<Long, List<long[]>> groups = new HashMap<>();
            for (int r = 0; r < n; r++) {
                long[] c = all.get(r);
                if (c[0] == DriverConstants.SPLIT_NO_COLOR) continue;
                groups.computeIfAbsent(c[0], x -> new ArrayList<>()).add(new long[] {c[1], r});
            }
            for (List<long[]> members : groups.values()) {
                members.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
                LocalClique clique = new LocalClique(members.size());
                Meetings rv = new Meetings();
                for (int i = 0; i < members.size(); i++) out.put((int) members.get(i)[1], new HostComm(clique, rv, i));
            }
            return out;
        }, initTimeout(), r -> true, this::abandonedBy);
        return (HostComm) mine;
    }

    /** Shrink meets in this JVM; across processes it is not implemented yet (the clique it recovers from is dead). */
    private void requireInJvm(String what) {
        if (transport instanceof NetworkClique) {
            throw new org.jccl.core.error.InvalidUsageException(what + " of a host communicator whose ranks are in several processes"
                    + " is not supported; create a new communicator with a new unique id instead");
        }
    }

    @Override
    public DriverComm shrink(int[] excludedRanks, CommConfig config) {
        requireInJvm("shrink");
        int n = size();
        boolean[] excluded = new boolean[n];
        for (int r : excludedRanks) {
            if (r < 0 || r >= n || r == rank) throw new InvalidArgumentException("cannot exclude rank " + r);
            excluded[r] = true;
        }
        int remaining = 0;
        for (boolean e : excluded) if (!e) remaining++;
        int[] sorted = excludedRanks.clone();
        Arrays.sort(sorted);
        int participants = remaining;
        // Shrinking is how ranks recover from a failure, so it works on a poisoned clique too.
        return (HostComm) control.meet("shrink#" + (shrinks++) + Arrays.toString(sorted), participants, rank, new long[0], all -> {
            Map<Integer, Object> out = new HashMap<>();
            LocalClique clique = new LocalClique(participants);
            Meetings rv = new Meetings();
            int next = 0;
            for (int r = 0; r < n; r++) if (!excluded[r]) out.put(r, new HostComm(clique, rv, next++));
            return out;
        }, initTimeout(), r -> !excluded[r], () -> null); // a shrink is how ranks recover: poison does not stop it
    }

    @Override
    public long register(MemoryBlock block, long offset, long bytes) {
        if (!(block instanceof HostMemoryBlock)) throw new InvalidArgumentException(block + " is not host-backend memory");
        if (block.isFreed()) throw new InvalidArgumentException("cannot register freed memory");
        if (offset < 0 || bytes <= 0 || offset > block.size() - bytes) {
            throw new InvalidArgumentException("range [" + offset + ", +" + bytes + ") is outside a block of " + block.size() + " bytes");
        }
        long handle = nextHandle.getAndIncrement();
        registrations.put(handle, new long[] {block.address() + offset, bytes});
        return handle;
    }

    @Override
    public void deregister(long handle) {
        if (registrations.remove(handle) == null) throw new InvalidArgumentException("no registration with handle " + handle + " on rank " + rank);
    }

    /** The number of live registrations, for tests. */
    int registrationCount() {
        return registrations.size();
    }

    @Override
    public int createPreMulSum(double hostScalar, @Nullable MemoryBlock deviceScalar, long deviceScalarOffset, DataType type) {
        Reduction r;
        if (deviceScalar == null) {
            r = new Reduction(Reduction.Kind.PREMUL_SUM, hostScalar, null, 0);
        } else {
            if (!(deviceScalar instanceof HostMemoryBlock h)) throw new InvalidArgumentException(deviceScalar + " is not host-backend memory");
            if (deviceScalarOffset < 0 || deviceScalarOffset > h.size() - type.size()) {
                throw new InvalidArgumentException("the scalar at offset " + deviceScalarOffset + " is outside its block");
            }
            r = new Reduction(Reduction.Kind.PREMUL_SUM, 0, h, (int) deviceScalarOffset);
        }
        synchronized (this) {
            int code = nextOpCode++;
            userOps.put(code, r);
            userOpTypes.put(code, type);
            return code;
        }
    }

    @Override
    public void destroyReduceOp(int code) {
        if (code < FIRST_USER_OP || userOps.remove(code) == null) {
            throw new InvalidArgumentException("no user-defined reduction with code " + code + " on rank " + rank);
        }
        userOpTypes.remove(code);
    }

    // ---- windows and one-sided operations

    @Override
    public long windowRegister(MemoryBlock block, long offset, long bytes, int flags) {
        HostWindows mine = transport.windowsOf(rank);
        if (!(block instanceof HostMemoryBlock h)) throw new InvalidArgumentException(block + " is not host-backend memory");
        if (offset < 0 || bytes <= 0 || offset > block.size() - bytes) {
            throw new InvalidArgumentException("range [" + offset + ", +" + bytes + ") is outside a block of " + block.size() + " bytes");
        }
        long index = windowsRegistered++;
        long handle = index + 1;
        // Added before the ranks meet: the first rank back from the meeting may put here before this thread returns.
        mine.add(handle, h, offset, bytes);
        boolean agreed = false;
        try {
            long[] sizes = allRanks("window#" + index, bytes, "registering window " + index);
            for (int r = 0; r < sizes.length; r++) {
                if (sizes[r] != bytes) {
                    throw new InvalidUsageException("ranks disagree on a window's size: rank " + rank + " registers " + bytes
                            + " bytes, rank " + r + " " + sizes[r]);
                }
            }
            agreed = true;
            return handle;
        } finally {
            if (!agreed) mine.remove(handle);
        }
    }

    @Override
    public void windowDeregister(long window) {
        HostWindows mine = transport.windowsOf(rank);
        if (!mine.has(window)) throw new InvalidArgumentException("no window with handle " + window + " on rank " + rank);
        allRanks("unwindow#" + window, window, "deregistering window " + (window - 1));
        mine.remove(window);
    }

    /**
     * Every rank's {@code value}, once all ranks brought theirs: a barrier on the launch threads. While it waits,
     * {@link #waitingFor()} names {@code what} and the ranks that have not come, for the engine's timeout error.
     */
    private long[] allRanks(String key, long value, String what) {
        int n = size();
        try {
            if (transport instanceof NetworkClique net) {
                setUpWait = () -> what + ": " + notCome(net.exchangeAbsentees());
                try {
                    return net.exchange(value);
                } catch (CliqueFailedException e) {
                    throw e.asJccl();
                }
            }
            setUpWait = () -> what + ": " + notCome(control.absentees(key, n));
            return (long[]) control.meet(key, n, rank, new long[] {value}, all -> {
                long[] values = new long[n];
                for (int r = 0; r < n; r++) values[r] = all.get(r)[0];
                Map<Integer, Object> out = new HashMap<>();
                for (int r = 0; r < n; r++) out.put(r, values);
                return out;
            }, initTimeout(), r -> true, this::abandonedBy);
        } finally {
            setUpWait = null;
        }
    }

    /** Which ranks have not made a collective call, in words. */
    private static String notCome(List<Integer> ranks) {
        if (ranks.isEmpty()) return "every rank has made this call, and their results are being handed out";
        if (ranks.size() == 1) return "rank " + ranks.get(0) + " has not made this call";
        StringBuilder sb = new StringBuilder("ranks ");
        for (int i = 0; i < ranks.size(); i++) sb.append(i == 0 ? "" : ", ").append(ranks.get(i));
        return sb.append(" have not made this call").toString();
    }

    @Override
    public long windowUserPointer(long window) {
        return transport.windowsOf(rank).address(window);
    }

    @Override
    public OneSidedLimits oneSidedLimits() {
        transport.windowsOf(rank);
        return new OneSidedLimits(HostWindows.SIGNALS, HostWindows.CONTEXTS, true,
                DriverConstants.WIN_COLL_SYMMETRIC | DriverConstants.WIN_STRICT_ORDERING, DriverConstants.WIN_REQUIRED_ALIGNMENT, false);
    }

    /**
     * Enqueued on the stream at once, also inside a group (before the group's collectives): puts and signals never
     * block. A wait does, and inside a group it holds the group's collectives until its signal arrives, as NCCL's
     * grouped wait does: a peer that signals only after its part of such a collective deadlocks both (reported by
     * {@link #waitingFor()}).
     */
    @Override
    public void putSignal(MemoryRef source, long count, DataType type, int peer, long window, long peerOffset,
                          int signalIndex, int context, DriverStream stream) {
        if (!(source.block() instanceof HostMemoryBlock src)) throw new InvalidArgumentException(source + " is not host-backend memory");
        long bytes = count * type.size();
        long at = source.offset();
        oneSided(stream, "putSignal", () -> transport.put(rank, peer, window, peerOffset, src, at, bytes, signalIndex, context));
    }

    @Override
    public void signal(int peer, int signalIndex, int context, DriverStream stream) {
        oneSided(stream, "signal", () -> transport.signal(rank, peer, signalIndex, context));
    }

    @Override
    public void waitSignal(WaitDescriptor[] waits, DriverStream stream) {
        HostWindows mine = transport.windowsOf(rank);
        WaitDescriptor[] copy = waits.clone();
        boolean grouped = HostGroup.current().active(); // then it holds the group's operations enqueued after it
        oneSided(stream, "waitSignal", () -> mine.await(copy, transport, grouped));
    }

    /** A one-sided task on the stream; a failure is this rank's async error, set before any later event completes. */
    private void oneSided(DriverStream stream, String what, Runnable task) {
        HostStream.of(stream).enqueue(() -> {
            try {
                if (asyncError != Errors.SUCCESS) return;
                String poison = transport.poisoned();
                if (poison != null) throw CliqueFailedException.poisoned(poison, transport.poisonCode());
                task.run();
            } catch (CliqueFailedException e) {
                fail(e.resultCode(), what + " failed: " + e.getMessage());
            } catch (RuntimeException e) {
                fail(Errors.INVALID_ARGUMENT, what + " failed: " + e.getMessage());
            }
        });
    }

    static Duration initTimeout() {
        return JcclSettings.HOST_INIT_TIMEOUT.duration();
    }

    @Override
    public String toString() {
        return "HostComm[rank " + rank + "/" + size() + "]";
    }
}
