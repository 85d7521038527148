package org.jccl.core.host;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.jccl.core.OpKind;
import org.jccl.core.error.Errors;
import org.jccl.core.thread.Backoff;
import org.jspecify.annotations.Nullable;

/**
 * The ranks of one communicator as threads of this JVM, exchanging data through shared memory.
 *
 * <p>A collective: every rank publishes its operation, all meet at a barrier, each rank does its share of the
 * work straight on all ranks' buffers, and all meet again before anyone returns (so no buffer is reused while a
 * peer still reads it). Reductions are split into chunks of elements that the ranks claim from a shared counter
 * (so ranks that get the CPU do the work when there are more ranks than cores): whoever claims a chunk reduces it
 * across every rank's send buffer and writes the result to every rank's receive buffer, reading the chunk
 * completely before writing it, which keeps in-place forms safe. The order of ranks within each element is always
 * 0..n-1, so who computes a chunk never changes the result. Data-movement
 * collectives are pulled: each rank fills only its own receive buffer.
 *
 * <p>Point-to-point: one FIFO mailbox per ordered pair of ranks. A send posts its buffer without waiting; the
 * receive copies the data and marks it consumed; a send completes when consumed.
 *
 * <p>Every wait is ended by the rank it waits for: the last rank at a barrier unparks the others, a send unparks its
 * receiver, a receive its sender, a poisoning everyone, and a rank that closes its communicator everyone (whoever
 * still waits for it then fails, since it takes part in nothing more). A waiting rank makes its thread known before it checks what
 * it waits for, so no wake-up is missed and a rank never depends on the length of its parks.
 */
final class LocalClique implements HostTransport {
    /** Elements per unit of reduction work that ranks claim from a shared counter. */
    private static final long CHUNK = Scratch.BLOCK;
    private final int size;
    private final HostOp[] slots;
    private final Backoff backoff;
    private final RankBarrier barrier;
    /** The thread each rank last sent or received on, for its peers' wake-ups. */
    private final AtomicReferenceArray<Thread> threads;
    /** The next unclaimed chunk of the current reduction; reset by the last rank to reach a barrier. */
    private final AtomicLong nextChunk = new AtomicLong();
    private final ConcurrentLinkedQueue<Parcel>[] mailboxes;
    private volatile @Nullable String poisoned;
    /** Written before {@link #poisoned}, which readers check first. */
    private volatile int poisonCode = Errors.REMOTE_ERROR;
    /** 1 for each rank that closed its communicator: it takes part in nothing more. */
    private final AtomicIntegerArray left;
    // Per-rank argument arrays for the reduction kernel, so the data path allocates nothing.
    private final HostMemoryBlock[][] sources;
    private final int[][] sourceOffsets;
    private final HostMemoryBlock[][] destinations;
    private final int[][] destinationOffsets;
    private final HostMemoryBlock[][] biases;
    private final int[][] biasOffsets;
    private final Reduction[][] reductions;
    private final HostWindows[] windows;
    /**
     * What each rank's stream waits in now, for {@link #waitingFor}: the {@link HostOp} of a collective or a receive,
     * the {@link Parcel} of a send; null otherwise. Set and cleared around each wait without allocating.
     */
    private final AtomicReferenceArray<@Nullable Object> waits;

    LocalClique(int size) {
        this(size, Backoff.HOST_RANKS);
    }

    /** A clique whose ranks wait by {@code waits} (tests give it parks far longer than any wait). */
    @SuppressWarnings("unchecked")
    LocalClique(int size, Backoff waits) {
        this.size = size;
        this.slots = new HostOp[size];
        this.backoff = waits;
        this.barrier = new RankBarrier(size, waits);
        this.threads = new AtomicReferenceArray<>(size);
        this.left = new AtomicIntegerArray(size);
        this.mailboxes = new ConcurrentLinkedQueue[size * size];
        for (int i = 0; i < mailboxes.length; i++) mailboxes[i] = new ConcurrentLinkedQueue<>();
        this.sources = new HostMemoryBlock[size][size];
        this.sourceOffsets = new int[size][size];
        this.destinations = new HostMemoryBlock[size][size];
        this.destinationOffsets = new int[size][size];
        this.biases = new HostMemoryBlock[size][size];
        this.biasOffsets = new int[size][size];
        this.reductions = new Reduction[size][size];
        this.windows = new HostWindows[size];
        for (int r = 0; r < size; r++) windows[r] = new HostWindows(size, waits);
        this.waits = new AtomicReferenceArray<>(size);
    }

    @Override
    public @Nullable String waitingFor(int rank) {
        Object w = waits.get(rank);
        if (w instanceof Parcel p) {
            return p.consumed ? null : "its stream waits in a send to rank " + p.receiver + ", which has not issued the"
                    + " matching recv";
        }
        if (!(w instanceof HostOp op)) return null;
        if (op.kind == OpKind.RECV) {
            return mailboxes[op.peer * size + rank].isEmpty() ? "its stream waits in a recv from rank " + op.peer
                    + ", which has not issued the matching send" : null;
        }
        return absentees(rank, op);
    }

    /** A send waiting in a mailbox. */
    private static final class Parcel {
        final HostMemoryBlock block;
        final int offset;
        final long bytes;
        final Thread sender;
        final int receiver;
        volatile boolean consumed;

        Parcel(HostMemoryBlock block, int offset, long bytes, Thread sender, int receiver) {
            this.block = block;
            this.offset = offset;
            this.bytes = bytes;
            this.sender = sender;
            this.receiver = receiver;
        }
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public HostWindows windowsOf(int rank) {
        return windows[rank];
    }

    @Override
    public void put(int from, int peer, long window, long offset, HostMemoryBlock source, long sourceOffset, long bytes,
                    int signal, int context) {
        checkPoison();
        if (hasLeft(peer)) throw CliqueFailedException.departed(peer, "a putSignal to it has no window to land in");
        windows[peer].land(window, offset, source, sourceOffset, bytes, from, signal, context);
    }

    @Override
    public void signal(int from, int peer, int signal, int context) {
        checkPoison();
        if (hasLeft(peer)) throw CliqueFailedException.departed(peer, "a signal to it is never waited for");
        windows[peer].count(from, signal, context);
    }

    // ---- ranks that close

    /**
     * {@code rank} closed its communicator. It closes only once its work completed, so it is in no unfinished
     * barrier and its sends were all received; every rank waiting for it now is woken and fails (see
     * {@link #checkPeersStay}).
     */
    @Override
    public void close(int rank) {
        left.set(rank, 1);
        wakeEveryRank();
    }

    @Override
    public boolean hasLeft(int rank) {
        return left.get(rank) == 1;
    }

    /** A collective needs every rank: one that closed fails it at once rather than at the work's timeout. */
    private void checkPeersStay(int rank, HostOp op) {
        checkPoison();
        for (int r = 0; r < size; r++) {
            if (r != rank && hasLeft(r)) {
                throw CliqueFailedException.departed(r, "rank " + rank + "'s " + op.kind.method() + " needs every rank");
            }
        }
    }

    // ---- failure

    @Override
    public void poison(String reason) {
        poison(reason, Errors.REMOTE_ERROR);
    }

    private synchronized void poison(String reason, int code) {
        if (poisoned == null) {
            poisonCode = code;
            poisoned = reason;
        }
        wakeEveryRank();
    }

    /** Ends every wait of every rank (threads parked in a send or receive, window waits, the barrier) to look again. */
    private void wakeEveryRank() {
        for (int r = 0; r < size; r++) {
            Thread t = threads.get(r);
            if (t != null) LockSupport.unpark(t);
            windows[r].wake();
        }
        barrier.wakeAll();
    }

    @Override
    public int poisonCode() {
        return poisonCode;
    }

    @Override
    public @Nullable String poisoned() {
        return poisoned;
    }

    private void checkPoison() {
        String p = poisoned;
        if (p != null) throw CliqueFailedException.poisoned(p, poisonCode);
    }

    private CliqueFailedException disagreement(String what) {
        String reason = "ranks disagree: " + what;
        poison(reason, Errors.INVALID_USAGE);
        return new CliqueFailedException(reason, Errors.INVALID_USAGE);
    }

    // ---- barrier

    private void barrier(int rank, HostOp op) {
        barrier.await(rank, () -> nextChunk.set(0), () -> checkPeersStay(rank, op));
    }

    // ---- collectives

    @Override
    public void collective(int rank, HostOp op) {
        checkPeersStay(rank, op);
        slots[rank] = op;
        waits.set(rank, op);
        try {
            collectiveInPlace(rank, op);
        } finally {
            waits.set(rank, null);
        }
    }

    /** The ranks {@code rank} waits for at a barrier of {@code op}, in words; null when it waits for none. */
    private @Nullable String absentees(int rank, HostOp op) {
        List<Integer> missing = barrier.absentees(rank);
        if (missing.isEmpty()) return null;
        return "its stream waits in " + op.kind.method() + " for " + (missing.size() == 1 ? "rank " : "ranks ")
                + missing.stream().map(String::valueOf).collect(Collectors.joining(", ")) + ", which "
                + (missing.size() == 1 ? "has" : "have") + " not joined it (never issued it, or issued other operations"
                + " before it)";
    }

    private void collectiveInPlace(int rank, HostOp op) {
        barrier(rank, op);
        try {
            checkAgreement(op);
            runShare(rank, op);
        } catch (CliqueFailedException e) {
            throw e;
        } catch (RuntimeException e) {
            poison("rank " + rank + " failed in " + op + ": " + e);
            throw e;
        }
        barrier(rank, op);
        slots[rank] = null; // every peer is done with it: do not keep its buffers reachable
    }

    private void checkAgreement(HostOp mine) {
        HostOp first = slots[0];
        if (first.kind != mine.kind) throw disagreement("rank 0 runs " + first + ", another rank " + mine);
        if (first.count != mine.count || first.type != mine.type) throw disagreement(first + " vs " + mine);
        if (mine.kind.rooted() && first.peer != mine.peer) throw disagreement("roots " + first.peer + " vs " + mine.peer);
        if (mine.reduction != null && first.reduction != null && mine.reduction.kind() != first.reduction.kind()) {
            throw disagreement("reductions " + first.reduction.kind() + " vs " + mine.reduction.kind());
        }
    }

    private void runShare(int r, HostOp op) {
        int n = size;
        int esize = op.type.size();
        long count = op.count;
        switch (op.kind) {
            case ALL_REDUCE, ALL_REDUCE_WITH_BIAS, REDUCE -> {
                HostMemoryBlock[] src = sources[r];
                int[] srcOff = sourceOffsets[r];
                Reduction[] red = reductions[r];
                HostMemoryBlock[] dst = destinations[r];
                int[] dstOff = destinationOffsets[r];
                HostMemoryBlock[] bias = op.kind == OpKind.ALL_REDUCE_WITH_BIAS ? biases[r] : null;
                int ndst = op.kind == OpKind.REDUCE ? 1 : n;
                long chunk;
                while ((chunk = nextChunk.getAndIncrement()) * CHUNK < count) {
                    long lo = chunk * CHUNK;
                    int shift = (int) (lo * esize);
                    for (int j = 0; j < n; j++) {
                        src[j] = slots[j].send;
                        srcOff[j] = slots[j].sendOffset + shift;
                        red[j] = slots[j].reduction;
                    }
                    if (op.kind == OpKind.REDUCE) {
                        HostOp root = slots[op.peer];
                        dst[0] = root.recv;
                        dstOff[0] = root.recvOffset + shift;
                    } else {
                        for (int j = 0; j < n; j++) {
                            dst[j] = slots[j].recv;
                            dstOff[j] = slots[j].recvOffset + shift;
                        }
                    }
                    if (bias != null) {
                        for (int j = 0; j < n; j++) {
                            bias[j] = slots[j].bias;
                            biasOffsets[r][j] = slots[j].biasOffset + shift;
                        }
                    }
                    Reducer.reduce(op.type, red, n, src, srcOff, ndst, dst, dstOff, bias, biasOffsets[r],
                            Math.min(CHUNK, count - lo));
                }
            }
            case REDUCE_SCATTER -> {
                HostMemoryBlock[] src = sources[r];
                int[] srcOff = sourceOffsets[r];
                Reduction[] red = reductions[r];
                long chunksPerBlock = (count + CHUNK - 1) / CHUNK;
                long unit;
                while ((unit = nextChunk.getAndIncrement()) < chunksPerBlock * n) {
                    int block = (int) (unit / chunksPerBlock);
                    long lo = (unit % chunksPerBlock) * CHUNK;
                    for (int j = 0; j < n; j++) {
                        src[j] = slots[j].send;
                        srcOff[j] = (int) (slots[j].sendOffset + (block * count + lo) * esize);
                        red[j] = slots[j].reduction;
                    }
                    destinations[r][0] = slots[block].recv;
                    destinationOffsets[r][0] = (int) (slots[block].recvOffset + lo * esize);
                    Reducer.reduce(op.type, red, n, src, srcOff, 1, destinations[r], destinationOffsets[r], null,
                            biasOffsets[r], Math.min(CHUNK, count - lo));
                }
            }
            case BROADCAST -> {
                HostOp root = slots[op.peer];
                copy(root.send, root.sendOffset, op.recv, op.recvOffset, count * esize);
            }
            case ALL_GATHER -> {
                for (int j = 0; j < n; j++) {
                    copy(slots[j].send, slots[j].sendOffset, op.recv, op.recvOffset + j * count * esize, count * esize);
                }
            }
            case GATHER -> {
                if (r == op.peer) {
                    for (int j = 0; j < n; j++) {
                        copy(slots[j].send, slots[j].sendOffset, op.recv, op.recvOffset + j * count * esize, count * esize);
                    }
                }
            }
            case SCATTER -> {
                HostOp root = slots[op.peer];
                copy(root.send, root.sendOffset + r * count * esize, op.recv, op.recvOffset, count * esize);
            }
            case ALL_TO_ALL -> {
                for (int j = 0; j < n; j++) {
                    copy(slots[j].send, slots[j].sendOffset + r * count * esize, op.recv,
                            op.recvOffset + j * count * esize, count * esize);
                }
            }
            case ALL_TO_ALL_V -> {
                long[][] mine = op.counts;
                for (int j = 0; j < n; j++) {
                    long[][] theirs = slots[j].counts;
                    long sent = theirs[0][r];
                    long expected = mine[2][j];
                    if (sent != expected) {
                        throw disagreement("allToAllv: rank " + j + " sends " + sent + " elements to rank " + r
                                + ", which expects " + expected);
                    }
                    copy(slots[j].send, slots[j].sendOffset + theirs[1][r] * esize, op.recv,
                            op.recvOffset + mine[3][j] * esize, sent * esize);
                }
            }
            default -> throw new IllegalStateException(op.kind + " is not a collective");
        }
    }

    /** Copies bytes between blocks; copying a region onto itself (an in-place form) does nothing. */
    static void copy(@Nullable HostMemoryBlock src, long srcOffset, @Nullable HostMemoryBlock dst, long dstOffset, long bytes) {
        if (bytes == 0 || (src == dst && srcOffset == dstOffset)) return;
        if (src == null || dst == null) throw new IllegalStateException("missing buffer");
        dst.bytes().put((int) dstOffset, src.bytes(), (int) srcOffset, (int) bytes);
    }

    // ---- point-to-point

    @Override
    public Object postSend(int rank, HostOp op) {
        checkPoison();
        threads.set(rank, Thread.currentThread());
        Parcel p = new Parcel(op.send, op.sendOffset, op.count * op.type.size(), Thread.currentThread(), op.peer);
        mailboxes[rank * size + op.peer].offer(p);
        Thread receiver = threads.get(op.peer);
        if (receiver != null) LockSupport.unpark(receiver);
        return p;
    }

    @Override
    public void awaitConsumed(int rank, Object posted) {
        Parcel p = (Parcel) posted;
        waits.set(rank, p);
        try {
            for (Backoff.Waiter wait = backoff.startWoken(); !p.consumed; ) {
                checkPoison();
                if (hasLeft(p.receiver) && !p.consumed) {
                    throw CliqueFailedException.departed(p.receiver, "rank " + rank + "'s send to it is never received");
                }
                wait.pause();
            }
        } finally {
            waits.set(rank, null);
        }
    }

    @Override
    public void receive(int rank, HostOp op) {
        threads.set(rank, Thread.currentThread());
        ConcurrentLinkedQueue<Parcel> box = mailboxes[op.peer * size + rank];
        Parcel p;
        waits.set(rank, op);
        try {
            for (Backoff.Waiter wait = backoff.startWoken(); (p = box.poll()) == null; ) {
                checkPoison();
                // Its sends completed before it closed, so none is still on its way: look once more, then give up.
                if (hasLeft(op.peer) && (p = box.poll()) == null) {
                    throw CliqueFailedException.departed(op.peer, "rank " + rank + "'s recv from it has no matching send");
                }
                if (p != null) break;
                wait.pause();
            }
        } finally {
            waits.set(rank, null);
        }
        long bytes = op.count * op.type.size();
        if (p.bytes != bytes) {
            p.consumed = true;
            throw disagreement("rank " + op.peer + " sends " + p.bytes + " bytes, rank " + rank + " receives " + bytes);
        }
        copy(p.block, p.offset, op.recv, op.recvOffset, bytes);
        p.consumed = true;
        LockSupport.unpark(p.sender);
    }
}
