package org.jccl.rma.kv;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.jccl.core.Communicator;
import org.jccl.core.Modules;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Feature;
import org.jccl.core.thread.Backoff;
import org.jccl.core.thread.SerialWorker;
import org.jccl.rma.kv.KvMessage.Announce;
import org.jccl.rma.kv.KvMessage.Cancel;
import org.jccl.rma.kv.KvMessage.Cancelled;
import org.jccl.rma.kv.KvMessage.Complete;
import org.jccl.rma.kv.KvMessage.Goodbye;
import org.jccl.rma.kv.KvMessage.Grant;
import org.jccl.rma.kv.KvMessage.Hello;
import org.jccl.rma.kv.KvMessage.LayerDone;
import org.jccl.rma.kv.KvMessage.PieceSent;
import org.jccl.rma.kv.KvMessage.Slot;
import org.jccl.rma.kv.KvMessage.Want;
import org.jccl.rma.kv.KvMessage.Welcome;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A prefill rank's side of KV transfers: sends requests from its {@link KvPool} to decode ranks' pools, each layer as
 * soon as it is ready and the receiver granted destination blocks, never before (so never into blocks decode did not
 * grant, and never retrying). One control link per receiver, made on first use; every request ends done or failed
 * typed, alone, while the others go on.
 *
 * <pre>{@code
 * KvSender sender = KvSender.open(pool, KvOptions.DEFAULT);
 * KvSend send = sender.send(new KvRequest("req-42", decodeRank, tokens, blockTable, Duration.ofSeconds(5)));
 * for (int layer = 0; layer < layers; layer++) { model.computeLayer(layer); send.ready(layer); }
 * send.done().thenAccept(d -> log.info("{} at {} GB/s over {}", d.request(), d.bytesPerSecond() / 1e9, d.path()));
 * }</pre>
 *
 * <p>Threading: every decision is made on the sender's own thread; calls return at once and never wait for the GPU.
 */
public final class KvSender implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvSender.class);

    private final KvPool pool;
    private final KvOptions options;
    private final ModuleContext context;
    private final KvCopies copies;
    private final SerialWorker thread;
    private final AtomicLong ids = new AtomicLong();
    private final long localSlotBytes;
    private final KvEndpoints endpoints;
    /** What the communicator's end does to this endpoint: it closes. */
    private final KvEndpoints.Endpoint ending = this::closeAsync;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile boolean closing;

    // ---- the sender thread's
    private final Map<Integer, Peer> peers = new HashMap<>();
    private final Map<Long, SendingRequest> requests = new HashMap<>();
    private final ArrayDeque<Integer> freeLocalSlots = new ArrayDeque<>();
    private final ArrayDeque<Runnable> waitingForLocalSlot = new ArrayDeque<>();

    /** One receiver, as this sender sees it. */
    private static final class Peer {
        final int rank;
        final List<SendingRequest> waiting = new ArrayList<>();
        @Nullable KvLink link;
        @Nullable Welcome welcome;
        KvPathKind path = KvPathKind.AUTO;
        @Nullable KvDirectPath direct;
        long pieceBytes;
        @Nullable String lost;
        boolean refused;

        Peer(int rank) {
            this.rank = rank;
        }
    }

    private KvSender(KvPool pool, KvOptions options) {
        this.pool = pool;
        this.options = options;
        this.context = Modules.context(pool.communicator());
        this.copies = new KvCopies(pool, context);
        Communicator c = pool.communicator();
        this.thread = new SerialWorker("jccl-kv-send-" + c.id() + "-r" + c.rank(), () -> { }, Backoff.HOST_PEERS);
        this.localSlotBytes = pool.stagingBytes() / options.slots();
        for (int s = 0; s < options.slots() && localSlotBytes > 0; s++) freeLocalSlots.add(s);
        this.endpoints = KvEndpoints.of(c);
        endpoints.add(ending);
    }

    /** A sender on {@code pool}; links to receivers are made when the first request for each is sent. */
    public static KvSender open(KvPool pool, KvOptions options) {
        Errors.requireArgument(pool, "pool");
        Errors.requireArgument(options, "options");
        if (pool.isClosed()) throw new InvalidUsageException(pool + " is closed");
        return new KvSender(pool, options);
    }

    public KvPool pool() {
        return pool;
    }

    public KvOptions options() {
        return options;
    }

    /**
     * Starts sending {@code request}: announces it to its receiver, which grants destination blocks when it can; its
     * layers go as {@link KvSend#ready} reports them. Checked first: a bad request throws and sends nothing.
     *
     * @throws InvalidArgumentException for a receiver outside the communicator or source blocks that do not fit the pool
     *                                  or the token count
     * @throws InvalidUsageException    once the sender is closed
     */
    public KvSend send(KvRequest request) {
        Errors.requireArgument(request, "request");
        if (closing) throw new InvalidUsageException("the KV sender of " + pool.communicator().describe() + " is closed");
        Communicator c = pool.communicator();
        if (request.receiver() < 0 || request.receiver() >= c.size()) {
            throw new InvalidArgumentException("KV request " + request.name() + ": receiver " + request.receiver()
                    + " is not a rank of " + c.describe());
        }
        KvLayout l = pool.layout();
        int[] blocks = request.sourceBlocks();
        if (blocks.length != l.blocksFor(request.tokens())) {
            throw new InvalidArgumentException("KV request " + request.name() + ": " + request.tokens() + " tokens take "
                    + l.blocksFor(request.tokens()) + " blocks of " + l.tokensPerBlock() + ", not " + blocks.length);
        }
        java.util.BitSet seen = new java.util.BitSet(l.blocks());
        for (int b : blocks) {
            if (b < 0 || b >= l.blocks()) {
                throw new InvalidArgumentException("KV request " + request.name() + ": source block " + b + " is outside"
                        + " the pool's 0.." + (l.blocks() - 1));
            }
            if (seen.get(b)) throw new InvalidArgumentException("KV request " + request.name() + ": source block " + b + " is given twice");
            seen.set(b);
        }
        KvSend handle = new KvSend(this, request, ids.incrementAndGet(), l.layers());
        if (!thread.submit(() -> start(new SendingRequest(handle)))) {
            throw new InvalidUsageException("the KV sender of " + c.describe() + " is closed");
        }
        return handle;
    }

    void layerReady(KvSend handle, KvLayer layer) {
        run(() -> {
            SendingRequest r = requests.get(handle.id());
            if (r == null || r.ending()) return;
            r.readyLayers.add(layer);
            issueReady(r);
        });
    }

    void cancel(KvSend handle) {
        run(() -> {
            SendingRequest r = requests.get(handle.id());
            if (r != null) fail(r, KvFailure.CANCELLED_BY_SENDER, "cancelled by the application", -1, -1);
        });
    }

    private void run(Runnable task) {
        thread.submit(task); // refused only after close, when every request has ended
    }

    // ---- requests

    private void start(SendingRequest r) {
        requests.put(r.id, r);
        r.deadline = KvTimers.after(r.request.deadline(), () -> run(() -> fail(r, KvFailure.DEADLINE,
                "not delivered within " + r.request.deadline(), -1, -1)));
        if (closing) {
            fail(r, KvFailure.CLOSED, "the sender is closing", -1, -1);
            return;
        }
        Peer p = peers.computeIfAbsent(r.request.receiver(), this::connect);
        if (p.lost != null) {
            fail(r, p.refused ? KvFailure.REFUSED : KvFailure.PEER_LOST, p.lost, -1, -1);
        } else if (p.welcome == null) {
            p.waiting.add(r);
        } else {
            announce(p, r);
        }
    }

    private void announce(Peer p, SendingRequest r) {
        if (r.ending()) return;
        try {
            KvGeometry.checkCompatible(pool.layout(), p.welcome.layout());
        } catch (InvalidArgumentException e) {
            fail(r, KvFailure.REFUSED, e.getMessage(), -1, -1);
            return;
        }
        r.state = SendingRequest.State.ANNOUNCED;
        long left = Math.max(1, (r.request.deadline().toNanos() - (System.nanoTime() - r.startedNanos)) / 1_000_000);
        p.link.send(new Announce(r.id, r.request.name(), r.request.tokens(), left));
    }

    private void onGrant(Peer p, Grant g) {
        SendingRequest r = requests.get(g.id());
        if (r == null || r.state != SendingRequest.State.ANNOUNCED) return;
        try {
            r.geometry = KvGeometry.of("KV request " + r.request.name(), pool.layout(), r.request.sourceBlocks(),
                    p.welcome.layout(), g.blocks(), r.request.tokens());
        } catch (InvalidArgumentException e) {
            fail(r, KvFailure.REFUSED, "the receiver's grant does not fit: " + e.getMessage(), -1, -1);
            return;
        }
        r.destination = g.blocks();
        r.grantedNanos = System.nanoTime();
        r.state = SendingRequest.State.GRANTED;
        try {
            if (p.direct != null) {
                r.prepared = p.direct.prepare(new KvPlan(r.request.name(), p.rank, pool.layout(), p.welcome.layout(),
                        r.geometry.table(), g.signalOffset(), g.signalValue()));
            } else {
                r.pieces = r.geometry.pieces(p.pieceBytes);
            }
        } catch (RuntimeException e) {
            fail(r, KvFailure.TRANSFER_FAILED, "preparing the copies failed: " + e.getMessage(), -1, -1);
            return;
        }
        issueReady(r);
    }

    /** Issues the layers that are ready, once granted: copies on direct paths, a want of slots on staged ones. */
    private void issueReady(SendingRequest r) {
        if (r.state != SendingRequest.State.GRANTED) return;
        Peer p = peers.get(r.request.receiver());
        while (!r.readyLayers.isEmpty() && !r.ending()) {
            KvLayer layer = r.readyLayers.poll();
            try {
                if (layer.produced() != null) pool.communicator().stream().waitFor(layer.produced());
            } catch (RuntimeException e) {
                fail(r, KvFailure.TRANSFER_FAILED, "waiting for the layer's event failed: " + e.getMessage(), layer.layer(), -1);
                return;
            }
            if (r.firstIssueNanos == 0) r.firstIssueNanos = System.nanoTime();
            r.layersIssued++;
            if (r.prepared != null) {
                issue(r, layer.layer(), () -> r.prepared.copyLayer(layer.layer()), () -> p.link.send(new LayerDone(r.id, layer.layer())));
            } else {
                int before = r.waitingPieces.size();
                for (int t = 0; t < pool.layout().tensors(); t++) {
                    for (int i = 0; i < r.pieces.size(); i++) r.waitingPieces.add(new SendingRequest.Piece(layer.layer(), t, i));
                }
                p.link.send(new Want(r.id, r.waitingPieces.size() - before));
            }
        }
    }

    private void onSlot(Peer p, Slot s) {
        SendingRequest r = requests.get(s.id());
        if (r == null || r.ending() || r.waitingPieces.isEmpty()) {
            // The request ended after the receiver granted the slot: a piece of nothing still answers for it, so the
            // receiver's slot and counts stay balanced.
            p.link.send(new PieceSent(s.id(), -1, -1, -1, s.slot()));
            return;
        }
        SendingRequest.Piece piece = r.waitingPieces.poll();
        withLocalSlot(local -> issuePiece(p, r, piece, s.slot(), local));
    }

    private void withLocalSlot(IntConsumer task) {
        Integer free = freeLocalSlots.poll();
        if (free != null) task.accept(free);
        else waitingForLocalSlot.add(() -> task.accept(freeLocalSlots.poll()));
    }

    private void freeLocalSlot(int slot) {
        freeLocalSlots.add(slot);
        Runnable next = waitingForLocalSlot.poll();
        if (next != null) next.run();
    }

    private void issuePiece(Peer p, SendingRequest r, SendingRequest.Piece piece, int slot, int local) {
        if (r.ending()) {
            freeLocalSlot(local);
            p.link.send(new PieceSent(r.id, -1, -1, -1, slot));
            return;
        }
        Welcome w = p.welcome;
        KvGeometry g = r.pieces.get(piece.index());
        String name = r.request.name();
        StreamOperation op = p.path == KvPathKind.PUT_SIGNAL
                ? copies.gatherAndPut(name, piece.layer(), piece.tensor(), g, local, localSlotBytes, p.rank,
                        w.stagingOffset() + slot * w.slotBytes())
                : copies.gatherAndSend(name, piece.layer(), piece.tensor(), g, local, localSlotBytes, p.rank);
        // The local slot is free again once the piece's work completed: its put or send has read the slot then.
        Work issued = issue(r, piece.layer(), () -> context.issue(op, Duration.ZERO), () -> { });
        if (issued != null) {
            p.link.send(new PieceSent(r.id, piece.layer(), piece.tensor(), piece.index(), slot));
            issued.whenComplete((v, e) -> run(() -> freeLocalSlot(local)));
        } else {
            p.link.send(new PieceSent(r.id, -1, -1, -1, slot));
            freeLocalSlot(local);
        }
    }

    /**
     * Issues one layer's (or piece's) work; {@code after} runs on this thread once it completed well. Null when it
     * could not be issued (the request failed then).
     */
    private @Nullable Work issue(SendingRequest r, int layer, Supplier<Work> work, Runnable after) {
        Work w;
        try {
            w = work.get();
        } catch (RuntimeException e) {
            fail(r, KvFailure.TRANSFER_FAILED, "issuing it failed: " + e.getMessage(), layer, -1);
            return null;
        }
        r.inFlight++;
        w.whenComplete((v, error) -> run(() -> {
            r.inFlight--;
            if (error != null) {
                fail(r, KvFailure.TRANSFER_FAILED, Errors.unwrap(error).getMessage(), layer, -1);
            } else if (!r.ending()) {
                after.run();
            }
            tryFinish(r);
        }));
        return w;
    }

    // ---- ending

    /** Ends {@code r} with a failure: stops issuing, tells the peer, finishes once nothing is in flight on either side. */
    private void fail(SendingRequest r, KvFailure failure, String detail, int layer, int block) {
        fail(r, failure, detail, layer, block, true);
    }

    private void fail(SendingRequest r, KvFailure failure, String detail, int layer, int block, boolean tellReceiver) {
        if (r.ending()) return;
        boolean announced = r.state != SendingRequest.State.WAITING_LINK;
        r.state = SendingRequest.State.ENDING;
        r.failure = new KvTransferException(r.request.name(), failure, layer, block, detail, null);
        r.waitingPieces.clear();
        Peer p = peers.get(r.request.receiver());
        if (!announced || p == null || p.lost != null || p.link == null) {
            r.peerDrained = true; // the receiver never heard of it, or can no longer answer
        } else if (tellReceiver) {
            p.link.send(new Cancel(r.id, failure, detail));
        }
        if (p != null) p.waiting.remove(r);
        tryFinish(r);
    }

    private void tryFinish(SendingRequest r) {
        if (r.state == SendingRequest.State.FINISHED || r.inFlight > 0) return;
        Peer p = peers.get(r.request.receiver());
        if (r.state == SendingRequest.State.ENDING) {
            if (!r.drainedSent && p != null && p.lost == null && p.link != null && r.state != SendingRequest.State.WAITING_LINK) {
                p.link.send(new Cancelled(r.id)); // nothing of ours is in flight: the receiver may free its blocks
            }
            r.drainedSent = true;
            if (!r.peerDrained) return;
            finish(r);
            r.handle.done.completeExceptionally(r.failure);
            return;
        }
        if (r.completeReceived && r.layersIssued == pool.layout().layers()) {
            finish(r);
            KvLayout to = p.welcome.layout(); // what decode holds of the request, as KvReceived counts it
            long bytes = (long) r.request.tokens() * to.tokenBytes() * to.layers() * to.tensors();
            r.handle.done.complete(new KvDelivered(r.request.name(), r.request.receiver(), p.path, bytes,
                    r.grantedNanos - r.startedNanos, System.nanoTime() - r.firstIssueNanos));
        }
    }

    private void finish(SendingRequest r) {
        r.state = SendingRequest.State.FINISHED;
        if (r.deadline != null) r.deadline.cancel(false);
        if (r.prepared != null) r.prepared.close();
        requests.remove(r.id);
        if (closing) tryClosed();
    }

    // ---- links

    private Peer connect(int rank) {
        Peer p = new Peer(rank);
        KvPathKind path;
        try {
            path = choosePath(rank);
        } catch (RuntimeException e) {
            p.lost = e.getMessage();
            p.refused = true;
            return p;
        }
        p.path = path;
        p.direct = switch (path) {
            case LSA_KERNEL -> pool.directPath(KvPathKind.LSA_KERNEL);
            case COPY -> new CopyPath(pool);
            default -> null;
        };
        KvLinks.connect(pool, rank, options, new KvLink.Handler() {
            @Override
            public void received(KvMessage message) {
                run(() -> onMessage(p, message));
            }

            @Override
            public void lost(String why) {
                run(() -> onLost(p, "the link to KV receiver rank " + rank + " was lost: " + why));
            }
        }).whenComplete((link, error) -> run(() -> {
            if (error != null) {
                onLost(p, "cannot link to KV receiver rank " + rank + ": " + Errors.unwrap(error).getMessage());
                return;
            }
            p.link = link;
            link.send(new Hello(pool.communicator().rank(), pool.layout(), path, localSlotBytes));
        }));
        return p;
    }

    /** The path to {@code rank}: the options' choice if this rank can take it, else why not; AUTO takes the fastest. */
    private KvPathKind choosePath(int rank) {
        KvDirectPath lsa = pool.directPath(KvPathKind.LSA_KERNEL);
        boolean lsaOk = lsa != null && lsa.reaches(rank);
        boolean copyOk = pool.inProcessPeer(rank) != null;
        boolean staging = localSlotBytes > 0;
        boolean putOk = staging && pool.window() != null && pool.communicator().backend().features().has(Feature.PUT_SIGNAL)
                && pool.communicator().backend().features().has(Feature.WAIT_SIGNAL);
        boolean sendRecvOk = staging && rank != pool.communicator().rank();
        KvPathKind wanted = options.path();
        if (wanted == KvPathKind.AUTO) {
            if (lsaOk) return KvPathKind.LSA_KERNEL;
            if (copyOk) return KvPathKind.COPY;
            if (putOk) return KvPathKind.PUT_SIGNAL;
            if (sendRecvOk) return KvPathKind.SEND_RECV;
            throw new InvalidUsageException("no KV path reaches rank " + rank + ": no LSA kernel path (" + why(KvPathKind.LSA_KERNEL)
                    + "), not in this process, and " + (staging ? "sending to itself" : "no staging area") + " for staged paths");
        }
        boolean ok = switch (wanted) {
            case LSA_KERNEL -> lsaOk;
            case COPY -> copyOk;
            case PUT_SIGNAL -> putOk;
            case SEND_RECV -> sendRecvOk;
            case AUTO -> true;
        };
        if (!ok) {
            throw new InvalidUsageException("the KV path " + wanted + " cannot reach rank " + rank + ": " + switch (wanted) {
                case LSA_KERNEL -> lsa == null ? why(KvPathKind.LSA_KERNEL) : "rank " + rank + " is outside this rank's LSA team";
                case COPY -> "rank " + rank + " is not in this process";
                case PUT_SIGNAL -> staging ? "the library has no one-sided puts or windows" : "the pool has no staging area";
                case SEND_RECV -> staging ? "a rank cannot send to itself on one stream" : "the pool has no staging area";
                case AUTO -> "";
            });
        }
        return wanted;
    }

    private String why(KvPathKind kind) {
        String why = pool.whyUnavailable(kind);
        return why != null ? why : "no provider (add jccl-device-api)";
    }

    private void onMessage(Peer p, KvMessage m) {
        if (m instanceof Welcome w) {
            onWelcome(p, w);
        } else if (m instanceof Grant g) {
            onGrant(p, g);
        } else if (m instanceof Slot s) {
            onSlot(p, s);
        } else if (m instanceof Complete c) {
            SendingRequest r = requests.get(c.id());
            if (r != null && !r.ending()) {
                r.completeReceived = true;
                tryFinish(r);
            }
        } else if (m instanceof Cancel c) {
            SendingRequest r = requests.get(c.id());
            if (r != null) fail(r, c.reason(), "the receiver ended it: " + c.detail(), -1, -1, false);
            else p.link.send(new Cancelled(c.id())); // ended here already: nothing of it is in flight
        } else if (m instanceof Cancelled c) {
            SendingRequest r = requests.get(c.id());
            if (r != null) {
                r.peerDrained = true;
                tryFinish(r);
            }
        } else if (m instanceof Goodbye g) {
            onLost(p, "KV receiver rank " + p.rank + " closed: " + g.reason());
        } else {
            LOG.warn("{} KV sender: unexpected {} from rank {}", pool.communicator().describe(), m, p.rank);
        }
    }

    private void onWelcome(Peer p, Welcome w) {
        if (!w.refusal().isEmpty()) {
            onLost(p, KvFailure.REFUSED, "KV receiver rank " + p.rank + " refused the link: " + w.refusal());
            return;
        }
        p.welcome = w;
        p.pieceBytes = Math.min(localSlotBytes, w.slotBytes());
        List<SendingRequest> waiting = new ArrayList<>(p.waiting);
        p.waiting.clear();
        for (SendingRequest r : waiting) announce(p, r);
    }

    private void onLost(Peer p, String why) {
        onLost(p, KvFailure.PEER_LOST, why);
    }

    /** The link to {@code p} is gone or refused: every request to it ends with {@code failure}. */
    private void onLost(Peer p, KvFailure failure, String why) {
        if (p.lost != null) return;
        p.lost = why;
        p.refused = failure == KvFailure.REFUSED;
        if (p.link != null) p.link.close(why);
        for (SendingRequest r : new ArrayList<>(requests.values())) {
            if (r.request.receiver() == p.rank) {
                r.peerDrained = true;
                fail(r, failure, why, -1, -1);
                tryFinish(r);
            }
        }
        // A later request to that rank connects afresh.
        peers.remove(p.rank, p);
    }

    // ---- closing

    /**
     * Ends every request ({@link KvFailure#CLOSED}), waits until none is in flight, then closes the links. Idempotent.
     */
    public CompletableFuture<Void> closeAsync() {
        if (!closing) {
            closing = true;
            run(() -> {
                for (SendingRequest r : new ArrayList<>(requests.values())) fail(r, KvFailure.CLOSED, "the sender closed", -1, -1);
                tryClosed();
            });
        }
        return closed.copy();
    }

    private void tryClosed() {
        if (!requests.isEmpty() || closed.isDone()) return;
        for (Peer p : peers.values()) {
            if (p.link != null) {
                p.link.send(new Goodbye("the sender closed"));
                p.link.close("the sender closed");
            }
        }
        peers.clear();
        endpoints.remove(ending);
        thread.stop();
        closed.complete(null);
    }

    /** {@link #closeAsync()}, waiting for it; never on jccl's event thread. */
    @Override
    public void close() {
        closeAsync().join();
    }

    @Override
    public String toString() {
        return "KvSender[" + pool.communicator().describe() + "]";
    }
}
