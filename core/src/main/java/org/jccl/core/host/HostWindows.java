package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.WaitDescriptor;
import org.jccl.core.thread.Backoff;
import org.jspecify.annotations.Nullable;

/**
 * One rank's windows and signal counters on the host backend: a peer's put writes into this rank's registered
 * memory (straight from the peer's stream thread in one JVM, from a network thread across processes), then counts
 * its signal here and wakes this rank's stream thread if it waits. Counters are per (context, signal index, source rank); waits are cumulative, as NCCL's are:
 * each wait adds its count to what this rank already waited for and blocks its stream until the counter reaches it.
 * A waiting stream is woken by the signal it waits for or by its clique's poisoning ({@link #wake()}), never by a
 * timer.
 */
final class HostWindows {
    /** Signal indices the host backend accepts (NCCL 2.29 accepts only 0). */
    static final int SIGNALS = 4;
    /** Contexts the host backend accepts (NCCL 2.29 accepts only 0); each has its own counters. */
    static final int CONTEXTS = 2;

    private record Region(HostMemoryBlock block, long offset, long bytes) {
    }

    private final int size;
    private final Backoff backoff;
    private final Map<Long, Region> windows = new ConcurrentHashMap<>();
    private final AtomicLongArray arrived;
    /** What this rank's waits consumed so far, per counter; touched by its stream thread only. */
    private final long[] consumed;
    private volatile @Nullable Thread waiter;
    /** The wait the stream thread is blocked in, for {@link #waitingFor()}; null while it is not waiting. */
    private volatile @Nullable BlockedWait blocked;

    /** A wait for signals: which counter, how many arrived when it must go on, and how it was issued. */
    private record BlockedWait(int peer, int signal, int context, int index, long target, boolean grouped) {
    }

    /**
     * @param size  the ranks of the communicator
     * @param backoff how a waiting stream waits before and between parks
     */
    HostWindows(int size, Backoff backoff) {
        this.size = size;
        this.backoff = backoff;
        this.arrived = new AtomicLongArray(CONTEXTS * SIGNALS * size);
        this.consumed = new long[CONTEXTS * SIGNALS * size];
    }

    void add(long handle, HostMemoryBlock block, long offset, long bytes) {
        windows.put(handle, new Region(block, offset, bytes));
    }

    void remove(long handle) {
        if (windows.remove(handle) == null) throw new InvalidArgumentException("no window with handle " + handle);
    }

    boolean has(long handle) {
        return windows.containsKey(handle);
    }

    /** A peer's put: the data lands first, then the signal counts (the counter's update publishes the data). */
    void land(long handle, long offset, HostMemoryBlock source, long sourceOffset, long bytes, int from, int signal, int context) {
        if (bytes > 0) {
            write(handle, offset, bytes, dst -> {
                ByteBuffer src = source.bytes().duplicate();
                src.limit((int) (sourceOffset + bytes)).position((int) sourceOffset);
                dst.put(src);
            });
        }
        count(from, signal, context);
    }

    /**
     * Hands {@code copy} the {@code bytes} of window {@code handle} at {@code offset} to write a put's data into. The
     * window's memory is held for the copy: a put runs on the putting rank's stream thread (or a network thread), so
     * this rank may free the memory meanwhile — its communicator aborted, the library's windows gone with it, and the
     * module released the buffer. Direct memory written after its free corrupts the native heap; held, the free waits
     * for the copy, and a put that comes after it fails instead (the block refuses to be held).
     */
    void write(long handle, long offset, long bytes, Consumer<ByteBuffer> copy) {
        Region w = windows.get(handle);
        if (w == null) throw new InvalidArgumentException("the target rank has no window with handle " + handle);
        if (offset < 0 || bytes < 0 || offset > w.bytes - bytes) {
            throw new InvalidArgumentException("a put of " + bytes + " bytes at offset " + offset + " does not fit a window of "
                    + w.bytes + " bytes");
        }
        w.block.retain();
        try {
            ByteBuffer dst = w.block.bytes().duplicate();
            dst.limit((int) (w.offset + offset + bytes)).position((int) (w.offset + offset));
            copy.accept(dst);
        } finally {
            w.block.release();
        }
    }

    /** A signal from {@code from}: counted, and the waiting stream thread woken. */
    void count(int from, int signal, int context) {
        arrived.incrementAndGet(index(from, signal, context));
        wake();
    }

    /** Wakes the stream thread if it waits here, so that it checks its signals and its clique's poison. */
    void wake() {
        Thread t = waiter;
        if (t != null) LockSupport.unpark(t);
    }

    /**
     * Blocks the calling stream thread until every descriptor's signals arrived, or the clique fails, or the peer a
     * signal must come from closed the communicator without sending it.
     *
     * @param grouped whether the wait was issued inside a group, for {@link #waitingFor()}: it then holds the group's
     *                collectives, which run after it on this stream
     */
    void await(WaitDescriptor[] waits, HostTransport transport, boolean grouped) {
        waiter = Thread.currentThread();
        try {
            for (WaitDescriptor d : waits) {
                int i = index(d.peer(), d.signalIndex(), d.context());
                long target = consumed[i] + d.count();
                if (arrived.get(i) < target) {
                    blocked = new BlockedWait(d.peer(), d.signalIndex(), d.context(), i, target, grouped);
                    awaitCounter(i, target, d, transport);
                    blocked = null;
                }
                consumed[i] = target;
            }
        } finally {
            blocked = null;
            waiter = null;
        }
    }

    private void awaitCounter(int i, long target, WaitDescriptor d, HostTransport transport) {
        for (Backoff.Waiter wait = backoff.startWoken(); arrived.get(i) < target; ) {
            String poison = transport.poisoned();
            if (poison != null) throw CliqueFailedException.poisoned(poison, transport.poisonCode());
            // A peer counts its signals before it can close, so once it closed the counter is final.
            if (transport.hasLeft(d.peer()) && arrived.get(i) < target) {
                throw CliqueFailedException.departed(d.peer(), "a waitSignal still lacks " + (target - arrived.get(i))
                        + " of signal " + d.signalIndex() + " (context " + d.context() + ") from it");
            }
            wait.pause();
        }
    }

    /**
     * The signal wait this rank's stream is blocked in, and what it still lacks; null when it waits for none. Read
     * from any thread (the counter moves while it reports).
     */
    @Nullable String waitingFor() {
        BlockedWait w = blocked;
        if (w == null) return null;
        long missing = Math.max(0, w.target - arrived.get(w.index));
        String wait = "its stream waits in a waitSignal for " + missing + " more of signal " + w.signal + " (context "
                + w.context + ") from rank " + w.peer;
        if (!w.grouped) return wait + ", which has not sent it";
        return wait + ". That wait was issued in a group, and a grouped wait holds the group's collectives until its"
                + " signal arrives: if rank " + w.peer + " sends the signal only after its part of one of those"
                + " collectives, neither side ever completes (NCCL deadlocks alike). Wait outside the group, or signal"
                + " before the collective";
    }

    private int index(int from, int signal, int context) {
        if (from < 0 || from >= size) throw new InvalidArgumentException("rank " + from + " is not in the communicator");
        if (signal < 0 || signal >= SIGNALS) throw new InvalidArgumentException("signal index " + signal + " is out of range");
        if (context < 0 || context >= CONTEXTS) throw new InvalidArgumentException("context " + context + " is out of range");
        return (context * SIGNALS + signal) * size + from;
    }

    /** The address a window was registered at. */
    long address(long handle) {
        Region w = windows.get(handle);
        if (w == null) throw new InvalidArgumentException("no window with handle " + handle);
        return w.block.address() + w.offset;
    }
}
