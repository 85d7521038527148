package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.thread.Backoff;
import org.jspecify.annotations.Nullable;

/**
 * One rank of a host communicator whose ranks live in different processes: a full mesh of TCP connections (one
 * per pair of ranks), data moved in frames of at most {@link Wire#CHUNK} bytes.
 *
 * <p>Netty threads only move bytes: an arriving data frame is queued on its (peer, lane) inbox and the rank's
 * stream thread, the only caller of the operations, copies and reduces it. Every collective keeps LocalClique's
 * results bit for bit: a reduction's element range {@code [count·r/n, count·(r+1)/n)} is owned by rank {@code r},
 * which receives every rank's contribution chunk by chunk and folds them with {@link Reducer} in rank order
 * 0..n-1, then sends the result to the ranks that need it (reduce-scatter by direct sends, then all-gather; each
 * rank sends and receives {@code 2(n-1)/n} of the buffer, like a ring, and chunks pipeline). Broadcast is a
 * pipelined chain from the root; the other data-movement collectives are direct sends.
 *
 * <p>Every message between two ranks starts frames that name the operation (a description of kind, type, count,
 * root and reduction) and the message's total size, so ranks that disagree fail with {@code ncclInvalidUsage}
 * instead of misreading data. Any failure (a lost connection, a malformed frame, a peer's abort or failure)
 * poisons the clique: the rank's async error is set, the peers are told, the connections close.
 */
final class NetworkClique implements HostTransport {
    private final int size;
    private final int rank;
    private final byte[] token;
    private final Channel[] peers;
    private final AtomicInteger connected = new AtomicInteger();
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final ConcurrentLinkedQueue<ByteBuf>[] inboxes;
    /** 1 for each peer that said GOODBYE (closed its communicator), set on the network thread after its last frame. */
    private final AtomicIntegerArray departed;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile @Nullable String poisoned;
    /** Written before {@link #poisoned}, which readers check first. */
    private volatile int poisonCode = Errors.REMOTE_ERROR;
    private volatile @Nullable HostComm owner;
    private volatile @Nullable Thread waiter;
    private final NetworkKernels kernels;
    /** This rank's windows and the one-sided frames that reach them. */
    private final RmaLane rma;
    /** The peers an {@link #exchange} on the launch thread still waits for (1 each), or null outside one. */
    private volatile @Nullable AtomicIntegerArray exchanging;
    /** The operation the stream thread runs now and the peer whose frame it waits for (-1: none), for {@link #waitingFor}. */
    private volatile @Nullable HostOp running;
    private volatile int awaitedPeer = -1;
    /** The last write queued to each peer by the stream thread (writes of one connection complete in order). */
    private final @Nullable ChannelFuture[] lastWrite;

    @SuppressWarnings("unchecked")
    NetworkClique(int size, int rank, byte[] token) {
        this.size = size;
        this.rank = rank;
        this.token = token.clone();
        this.peers = new Channel[size];
        this.departed = new AtomicIntegerArray(size);
        this.inboxes = new ConcurrentLinkedQueue[size * Wire.LANES];
        for (int i = 0; i < inboxes.length; i++) inboxes[i] = new ConcurrentLinkedQueue<>();
        this.lastWrite = new ChannelFuture[size];
        this.kernels = new NetworkKernels(this);
        this.rma = new RmaLane(this, new HostWindows(size, Backoff.HOST_RANKS));
        if (size == 1) ready.complete(null);
    }

    @Override
    public int size() {
        return size;
    }

    int rank() {
        return rank;
    }

    byte[] token() {
        return token;
    }

    /** The rank's communicator, whose async error a failure sets at once (before any waiting task wakes). */
    void owner(HostComm comm) {
        this.owner = comm;
    }

    /** Completes when a connection to every other rank is up. */
    CompletableFuture<Void> ready() {
        return ready;
    }

    /** Registers the connection to {@code peer}; false when it already has one (a duplicate is refused). */
    boolean attach(int peer, Channel ch) {
        synchronized (peers) {
            if (peer < 0 || peer >= size || peer == rank || peers[peer] != null || closed.get()) return false;
            peers[peer] = ch;
        }
        if (connected.incrementAndGet() == size - 1) ready.complete(null);
        return true;
    }

    // ---- inbound, on Netty threads

    /** Queues a data frame (whose reference the inbox now owns) for the stream thread; applies an RMA frame at once. */
    void deliver(int peer, int lane, ByteBuf frame) {
        if (closed.get()) {
            frame.release();
            return;
        }
        if (lane == Wire.LANE_RMA) {
            try {
                rma.land(peer, frame);
            } finally {
                frame.release();
            }
            return;
        }
        inboxes[peer * Wire.LANES + lane].offer(frame);
        if (closed.get()) drainInboxes();
        wake();
    }

    /** {@code peer} closed its communicator: every frame it sent before was delivered already. */
    void peerLeft(int peer) {
        departed.set(peer, 1);
        rma.windows().wake(); // a stream waiting for its signals fails now
        wake();
    }

    @Override
    public boolean hasLeft(int peer) {
        return departed.get(peer) == 1;
    }

    /** Wakes the stream thread if it waits for data or for room to send. */
    void wake() {
        Thread t = waiter;
        if (t != null) LockSupport.unpark(t);
    }

    boolean isClosed() {
        return closed.get();
    }

    // ---- failure and close

    @Override
    public void poison(String reason) {
        poison(reason, Errors.REMOTE_ERROR, true);
    }

    /** Fails this rank: records the reason, sets the async error, tells the peers (if {@code tell}), closes. */
    void poison(String reason, int code, boolean tell) {
        synchronized (this) {
            if (poisoned != null) return;
            poisonCode = code;
            poisoned = reason;
        }
        if (tell) {
            for (Channel ch : peers) {
                if (ch == null || !ch.isActive()) continue;
                ByteBuf b = ch.alloc().buffer(64).writeByte(Wire.POISON).writeInt(code);
                Wire.text(b, reason);
                ch.writeAndFlush(b);
            }
        }
        // Shut down before the failure is visible: whoever reacts to it (closing the communicator, counting the
        // network's users) must find the clique's connections and network lease already given back.
        shutDown(false);
        HostComm comm = owner;
        if (comm != null) comm.fail(code, "the communicator's clique failed: " + reason);
        ready.completeExceptionally(CliqueFailedException.poisoned(reason, code));
        rma.windows().wake(); // a stream waiting for signals fails now, not at its next park's end
        wake();
    }

    @Override
    public @Nullable String poisoned() {
        return poisoned;
    }

    @Override
    public int poisonCode() {
        return poisonCode;
    }

    /** A normal close: peers are told this rank leaves, so they do not mistake it for a failure. */
    @Override
    public void close(int rank) {
        shutDown(true);
    }

    private void shutDown(boolean goodbye) {
        if (!closed.compareAndSet(false, true)) return;
        for (Channel ch : peers) {
            if (ch == null) continue;
            if (goodbye && ch.isActive()) {
                ch.writeAndFlush(ch.alloc().buffer(1).writeByte(Wire.GOODBYE)).addListener(f -> ch.close());
            } else {
                // Let a queued POISON frame go out first.
                ch.eventLoop().execute(() -> ch.flush().close());
            }
        }
        drainInboxes();
        // The staging memory is left to the garbage collector: the stream thread may still be inside a kernel
        // when a Netty thread poisons the clique, and freeing it under that thread would crash the process.
        wake();
        HostNetwork.release();
    }

    private void drainInboxes() {
        for (ConcurrentLinkedQueue<ByteBuf> q : inboxes) {
            ByteBuf b;
            while ((b = q.poll()) != null) b.release();
        }
    }

    void checkPoison() {
        String p = poisoned;
        if (p != null) throw CliqueFailedException.poisoned(p, poisonCode);
        if (closed.get()) throw CliqueFailedException.poisoned("rank " + rank + " closed the communicator", Errors.REMOTE_ERROR);
    }

    /** The ranks disagree: this rank fails with ncclInvalidUsage, its peers with ncclRemoteError. */
    CliqueFailedException disagreement(String what) {
        String reason = "ranks disagree: " + what;
        poison(reason, Errors.INVALID_USAGE, true);
        return new CliqueFailedException(reason, Errors.INVALID_USAGE);
    }

    /** Waits for the network threads, which unpark {@link #waiter} when a frame arrives or a channel drains. */
    private void pause(Backoff.Waiter wait) {
        if (wait.isParking()) waiter = Thread.currentThread();
        wait.pause();
    }

    // ---- the operations (stream thread)

    @Override
    public void collective(int rank, HostOp op) {
        checkPoison();
        running = op;
        try {
            kernels.run(op);
        } catch (CliqueFailedException e) {
            throw e;
        } catch (RuntimeException e) {
            poison("rank " + rank + " failed in " + op + ": " + e, Errors.INTERNAL_ERROR, true);
            throw e;
        } finally {
            running = null;
        }
    }

    /** The peer whose part the running operation waits for: a rank that has not issued it, or issued others first. */
    @Override
    public @Nullable String waitingFor(int rank) {
        HostOp op = running;
        int peer = awaitedPeer;
        if (op == null || peer < 0) return null;
        return "its stream waits in " + op.kind.method() + " for data from rank " + peer + ", which has not sent its part"
                + " (never issued it, or issued other operations before it)";
    }

    @Override
    public Object postSend(int rank, HostOp op) {
        checkPoison();
        long bytes = op.count * op.type.size();
        return send(op.peer, Wire.LANE_P2P, 0, op.send, op.sendOffset, bytes, null, op.type);
    }

    @Override
    public void awaitConsumed(int rank, Object posted) {
        if (!(posted instanceof ChannelFuture f)) return;
        for (Backoff.Waiter wait = Backoff.HOST_PEERS.start(); !f.isDone(); ) {
            checkPoison();
            pause(wait);
        }
        if (!f.isSuccess()) checkPoison();
    }

    @Override
    public void receive(int rank, HostOp op) {
        checkPoison();
        long bytes = op.count * op.type.size();
        running = op;
        try {
            receive(op.peer, Wire.LANE_P2P, 0, op.recv, op.recvOffset, bytes,
                    got -> "rank " + op.peer + " sends " + got + " bytes, rank " + rank + " receives " + bytes);
        } finally {
            running = null;
        }
    }

    // ---- one-sided operations: the RMA lane

    @Override
    public HostWindows windowsOf(int rank) {
        if (rank != this.rank) throw new IllegalArgumentException("rank " + rank + " is in another process");
        return rma.windows();
    }

    @Override
    public void put(int from, int peer, long window, long offset, HostMemoryBlock source, long sourceOffset, long bytes,
                    int signal, int context) {
        checkPoison();
        awaitConsumed(rank, rma.put(peer, window, offset, source, sourceOffset, bytes, signal, context));
    }

    @Override
    public void signal(int from, int peer, int signal, int context) {
        checkPoison();
        rma.signal(peer, signal, context);
    }

    // ---- messages

    /**
     * Sends {@code bytes} from {@code block} at {@code offset} to {@code peer} as one message on {@code lane}, in
     * frames of at most {@link Wire#CHUNK} bytes (one empty frame for an empty message), without copying: the range
     * must stay unchanged until {@link #awaitWrites()}. Waits while the connection's outbound queue is full.
     * Returns the last frame's write, or null for a message to this rank itself (which is copied).
     */
    @Nullable ChannelFuture send(int peer, int lane, int desc, @Nullable HostMemoryBlock block, long offset, long bytes,
                                 @Nullable Reduction reduction, DataType type) {
        ChannelFuture last = null;
        long done = 0;
        do {
            int len = (int) Math.min(Wire.CHUNK, bytes - done);
            last = sendFrame(peer, lane, desc, bytes, block, offset + done, len, reduction, type);
            done += len;
        } while (done < bytes);
        return last;
    }

    /**
     * Sends one frame of a message whose total is {@code total}; see {@link #send}. The payload is not copied: the
     * frame refers to {@code block} until written, so the caller must not change that range before
     * {@link #awaitWrites()} (the kernels wait before overwriting and before an operation completes).
     */
    @Nullable ChannelFuture sendFrame(int peer, int lane, int desc, long total, @Nullable HostMemoryBlock block, long offset,
                                      int len, @Nullable Reduction reduction, DataType type) {
        return sendFrame(peer, lane, desc, total, block, offset, len, reduction, type, peer == rank);
    }

    /** As {@link #sendFrame}, copying the payload into the frame, so the range may change at once. */
    @Nullable ChannelFuture sendFrameCopied(int peer, int lane, int desc, long total, @Nullable HostMemoryBlock block,
                                            long offset, int len, @Nullable Reduction reduction, DataType type) {
        return sendFrame(peer, lane, desc, total, block, offset, len, reduction, type, true);
    }

    private @Nullable ChannelFuture sendFrame(int peer, int lane, int desc, long total, @Nullable HostMemoryBlock block,
                                              long offset, int len, @Nullable Reduction reduction, DataType type, boolean copy) {
        int flags = 0;
        double auxDouble = 0;
        long auxLong = 0;
        if (reduction != null) {
            auxDouble = reduction.hostScalar();
            HostMemoryBlock s = reduction.scalarBlock();
            if (s != null) {
                flags |= Wire.FLAG_SCALAR_BYTES;
                for (int i = 0; i < type.size(); i++) auxLong |= (s.bytes().get(reduction.scalarOffset() + i) & 0xffL) << (8 * i);
            }
        }
        return dispatch(peer, lane, Frames.data(lane, flags, desc, total, auxDouble, auxLong, block, offset, len, copy));
    }

    /** Hands a frame to {@code peer}'s connection once it has room (or to this rank itself); null for this rank. */
    @Nullable ChannelFuture dispatch(int peer, int lane, ByteBuf frame) {
        if (peer == rank) {
            deliver(peer, lane, frame);
            return null;
        }
        Channel ch = peers[peer];
        if (hasLeft(peer)) {
            frame.release();
            throw CliqueFailedException.departed(peer, "rank " + rank + " has an operation that sends to it");
        }
        for (Backoff.Waiter wait = Backoff.HOST_PEERS.start(); !ch.isWritable(); ) {
            if (poisoned != null || closed.get() || !ch.isActive()) {
                frame.release();
                checkPoison();
                if (hasLeft(peer)) throw CliqueFailedException.departed(peer, "rank " + rank + " has an operation that sends to it");
                throw CliqueFailedException.poisoned("the connection to rank " + peer + " closed", Errors.REMOTE_ERROR);
            }
            pause(wait);
        }
        ChannelFuture f = ch.writeAndFlush(frame);
        lastWrite[peer] = f;
        return f;
    }

    /**
     * Exchanges one value with every rank on the launch thread (window registration): a barrier that returns every
     * rank's value, in rank order.
     */
    long[] exchange(long value) {
        byte[] mine = ByteBuffer.allocate(8).putLong(value).array();
        for (int k = 1; k < size; k++) sendControl((rank + k) % size, mine);
        long[] all = new long[size];
        all[rank] = value;
        AtomicIntegerArray awaited = new AtomicIntegerArray(size);
        for (int j = 0; j < size; j++) if (j != rank) awaited.set(j, 1);
        exchanging = awaited;
        try {
            for (int k = 1; k < size; k++) {
                int j = (rank - k + size) % size;
                all[j] = ByteBuffer.wrap(receiveControl(j, 8)).getLong();
                awaited.set(j, 0);
            }
        } finally {
            exchanging = null;
        }
        return all;
    }

    /**
     * The peers whose value an {@link #exchange} in progress has neither taken nor found waiting in their control
     * inbox: those that have not made the call. Empty when no exchange is in progress. Any thread.
     */
    List<Integer> exchangeAbsentees() {
        AtomicIntegerArray awaited = exchanging;
        List<Integer> out = new ArrayList<>();
        if (awaited == null) return out;
        for (int j = 0; j < size; j++) {
            if (awaited.get(j) == 1 && inboxes[j * Wire.LANES + Wire.LANE_CONTROL].isEmpty()) out.add(j);
        }
        return out;
    }

    /** Waits until every frame this rank queued has been written, so the memory the frames refer to may change. */
    void awaitWrites() {
        for (int j = 0; j < size; j++) {
            ChannelFuture f = lastWrite[j];
            if (f == null) continue;
            for (Backoff.Waiter wait = Backoff.HOST_PEERS.start(); !f.isDone(); ) {
                checkPoison();
                pause(wait);
            }
            if (!f.isSuccess()) {
                checkPoison();
                throw CliqueFailedException.poisoned("writing to rank " + j + " failed: " + f.cause(), Errors.REMOTE_ERROR);
            }
            lastWrite[j] = null;
        }
    }

    /** Forwards a received frame unchanged to {@code peer} (chained broadcast); takes a reference of its own. */
    void forward(int peer, ByteBuf frame) {
        Channel ch = peers[peer];
        for (Backoff.Waiter wait = Backoff.HOST_PEERS.start(); !ch.isWritable(); ) {
            checkPoison();
            pause(wait);
        }
        ch.writeAndFlush(frame.retainedDuplicate().readerIndex(0));
    }

    /** Sends a small control message (communicator management) to {@code peer}. */
    void sendControl(int peer, byte[] payload) {
        HostMemoryBlock b = Frames.staging(payload.length);
        b.bytes().put(0, payload);
        sendFrameCopied(peer, Wire.LANE_CONTROL, Frames.CONTROL, payload.length, b, 0, payload.length, null, DataType.UINT8);
        b.release();
    }

    /** Receives a control message of {@code bytes} bytes from {@code peer}. */
    byte[] receiveControl(int peer, int bytes) {
        ByteBuf frame = take(peer, Wire.LANE_CONTROL, Frames.CONTROL, bytes, bytes,
                got -> "rank " + peer + " sends a " + got + "-byte control message, rank " + rank + " expects " + bytes);
        try {
            byte[] out = new byte[bytes];
            frame.getBytes(Wire.DATA_HEADER, out);
            return out;
        } finally {
            frame.release();
        }
    }

    /** Describes what a receiver found instead of the expected size, for the disagreement message. */
    interface Mismatch {
        String describe(long sentBytes);
    }

    /**
     * Takes the next frame of a message from {@code peer} on {@code lane}, checking it belongs to the same
     * operation and has the expected total and frame size; the caller releases it. Payload starts at
     * {@link Wire#DATA_HEADER}.
     */
    ByteBuf take(int peer, int lane, int desc, long total, int len, Mismatch mismatch) {
        ConcurrentLinkedQueue<ByteBuf> box = inboxes[peer * Wire.LANES + lane];
        ByteBuf frame = box.poll();
        if (frame == null) frame = awaitFrame(peer, box);
        if (frame.getInt(Wire.AT_DESC) != desc) {
            frame.release();
            throw disagreement("rank " + peer + " runs a different operation than rank " + rank);
        }
        long sent = frame.getLong(Wire.AT_TOTAL);
        if (sent != total || frame.readableBytes() - Wire.DATA_HEADER != len) {
            frame.release();
            throw disagreement(mismatch.describe(sent));
        }
        return frame;
    }

    /** Waits for the next frame from {@code peer} in {@code box}, known meanwhile as what the stream waits for. */
    private ByteBuf awaitFrame(int peer, ConcurrentLinkedQueue<ByteBuf> box) {
        awaitedPeer = peer;
        try {
            ByteBuf frame;
            for (Backoff.Waiter wait = Backoff.HOST_PEERS.start(); (frame = box.poll()) == null; ) {
                checkPoison();
                // Its GOODBYE came after its last frame: look once more, then give up.
                if (hasLeft(peer) && (frame = box.poll()) == null) {
                    throw CliqueFailedException.departed(peer, "rank " + rank + " still waits for its part of an operation");
                }
                if (frame != null) break;
                pause(wait);
            }
            return frame;
        } finally {
            awaitedPeer = -1;
        }
    }

    /** Receives a whole message into {@code block} at {@code offset}. */
    void receive(int peer, int lane, int desc, @Nullable HostMemoryBlock block, long offset, long bytes, Mismatch mismatch) {
        long done = 0;
        do {
            int len = (int) Math.min(Wire.CHUNK, bytes - done);
            ByteBuf frame = take(peer, lane, desc, bytes, len, mismatch);
            try {
                Frames.copyPayload(frame, block, offset + done, len);
            } finally {
                frame.release();
            }
            done += len;
        } while (done < bytes);
    }

    /** The connection to a peer, for tests that inject raw bytes. */
    @Nullable Channel channelTo(int peer) {
        return peers[peer];
    }

    @Override
    public String toString() {
        return "NetworkClique[rank " + rank + "/" + size + (poisoned != null ? ", poisoned" : "") + "]";
    }
}
