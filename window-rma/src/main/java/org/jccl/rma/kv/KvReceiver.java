package org.jccl.rma.kv;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jccl.core.Communicator;
import org.jccl.core.Modules;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
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
 * A decode rank's side of KV transfers: takes requests from prefill ranks into its {@link KvPool}, each into blocks its
 * {@link KvBlockAllocator} hands out. A request is granted blocks only when the allocator has them and (optionally) the
 * blocks granted to requests in flight stay under {@link KvOptions#maxGrantedBlocks()}: decode never takes more than it
 * can hold, and prefill ranks wait, without retrying, until it can. Grants, and on staged paths staging slots, go round
 * the senders in turn, so one prefill rank cannot starve another.
 *
 * <p>Every granted request reaches {@code onIncoming} (on the receiver's own thread: it must not block) as a
 * {@link KvIncoming} with a future per layer and one for the whole request. Threading: every decision is made on the
 * receiver's own thread; nothing waits for the GPU.
 */
public final class KvReceiver implements AutoCloseable, KvEndpoints.Endpoint {
    private static final Logger LOG = LoggerFactory.getLogger(KvReceiver.class);

    private final KvPool pool;
    private final KvBlockAllocator allocator;
    private final KvOptions options;
    private final Consumer<KvIncoming> onIncoming;
    private final ModuleContext context;
    private final KvCopies copies;
    private final SerialWorker thread;
    private final KvEndpoints endpoints;
    private final long slotBytes;
    /** Device-side layer signals, where the pool has a direct path that raises them; else null. */
    private final @Nullable KvLayerSignals signals;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile boolean closing;
    private volatile KvLinks.@Nullable Listening listening;

    // ---- the receiver thread's
    /** Connected senders, in the order grants and slots go round. */
    private final List<Sender> senders = new ArrayList<>();
    private int nextSender;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private long grantedBlocks;
    /** Announced requests waiting for blocks, for {@link #waiting()}: written on the receiver's thread only. */
    private volatile int waiting;

    /** One sender, as this receiver sees it. */
    private static final class Sender {
        final KvLink link;
        int rank = -1;
        @Nullable Hello hello;
        long pieceBytes;
        final Map<Long, ReceivingRequest> requests = new HashMap<>();
        final ArrayDeque<ReceivingRequest> queued = new ArrayDeque<>();
        /** Staged paths: (request id, pieces) still wanting slots, oldest first. */
        final ArrayDeque<long[]> wants = new ArrayDeque<>();
        /** Staged paths: the slots handed to it and not yet answered by a {@link PieceSent}. */
        final Set<Integer> slotsHeld = new HashSet<>();
        @Nullable String lost;

        Sender(KvLink link) {
            this.link = link;
        }
    }

    private KvReceiver(KvPool pool, KvBlockAllocator allocator, KvOptions options, Consumer<KvIncoming> onIncoming) {
        this.pool = pool;
        this.allocator = allocator;
        this.options = options;
        this.onIncoming = onIncoming;
        this.context = Modules.context(pool.communicator());
        this.copies = new KvCopies(pool, context);
        Communicator c = pool.communicator();
        this.thread = new SerialWorker("jccl-kv-receive-" + c.id() + "-r" + c.rank(), () -> { }, Backoff.HOST_PEERS);
        this.slotBytes = pool.stagingBytes() / options.slots();
        for (int s = 0; s < options.slots() && slotBytes > 0; s++) freeSlots.add(s);
        this.signals = KvLayerSignals.of(pool);
        this.endpoints = KvEndpoints.of(c);
        endpoints.add(this);
        allocator.onFree(() -> run(this::grant));
    }

    /**
     * A receiver on {@code pool}, listening for senders of its communicator (in this process, and through the options'
     * rendezvous for other processes); completes once senders can reach it.
     *
     * @param onIncoming told of each request granted blocks, on the receiver's thread; must not block
     */
    public static CompletableFuture<KvReceiver> open(KvPool pool, KvBlockAllocator allocator, KvOptions options,
                                                     Consumer<KvIncoming> onIncoming) {
        Errors.requireArgument(pool, "pool");
        Errors.requireArgument(allocator, "allocator");
        Errors.requireArgument(options, "options");
        Errors.requireArgument(onIncoming, "onIncoming");
        if (pool.isClosed()) throw new InvalidUsageException(pool + " is closed");
        KvReceiver receiver = new KvReceiver(pool, allocator, options, onIncoming);
        CompletableFuture<KvLinks.Listening> listening;
        try {
            listening = KvLinks.listen(pool, options, receiver::accept);
        } catch (RuntimeException e) {
            receiver.stop();
            throw e;
        }
        return listening.handle((l, error) -> {
            if (error != null) {
                receiver.stop();
                throw Errors.unwrap(error);
            }
            receiver.listening = l;
            return receiver;
        });
    }

    public KvPool pool() {
        return pool;
    }

    public KvOptions options() {
        return options;
    }

    /** Requests announced and waiting for blocks (backpressure, when it grows). */
    public int waiting() {
        return waiting;
    }

    private void run(Runnable task) {
        thread.submit(task); // refused only after close
    }

    private KvLink.Handler accept(KvLink link) {
        Sender s = new Sender(link);
        return new KvLink.Handler() {
            @Override
            public void received(KvMessage message) {
                run(() -> onMessage(s, message));
            }

            @Override
            public void lost(String why) {
                run(() -> onLost(s, "the link to KV sender rank " + s.rank + " was lost: " + why));
            }
        };
    }

    // ---- messages

    private void onMessage(Sender s, KvMessage m) {
        if (m instanceof Hello h) {
            onHello(s, h);
        } else if (s.hello == null) {
            s.link.close("a KV sender must say hello first");
        } else if (m instanceof Announce a) {
            onAnnounce(s, a);
        } else if (m instanceof LayerDone d) {
            ReceivingRequest r = s.requests.get(d.id());
            if (r != null && !r.ending()) layerUsable(s, r, d.layer());
        } else if (m instanceof Want w) {
            ReceivingRequest r = s.requests.get(w.id());
            if (r != null && !r.ending()) {
                s.wants.add(new long[] {w.id(), w.pieces()});
                grantSlots();
            }
        } else if (m instanceof PieceSent p) {
            onPiece(s, p);
        } else if (m instanceof Cancel c) {
            ReceivingRequest r = s.requests.get(c.id());
            if (r != null) fail(s, r, c.reason(), "the sender ended it: " + c.detail(), -1, false);
            else s.link.send(new Cancelled(c.id())); // ended here already: nothing of it is in flight
        } else if (m instanceof Cancelled c) {
            ReceivingRequest r = s.requests.get(c.id());
            if (r != null) {
                r.peerDrained = true;
                tryFinish(s, r);
            }
        } else if (m instanceof Goodbye g) {
            onLost(s, "KV sender rank " + s.rank + " closed: " + g.reason());
        } else {
            LOG.warn("{} KV receiver: unexpected {} from rank {}", pool.communicator().describe(), m, s.rank);
        }
    }

    private void onHello(Sender s, Hello h) {
        String refusal = "";
        try {
            KvGeometry.checkCompatible(h.layout(), pool.layout());
        } catch (InvalidArgumentException e) {
            refusal = e.getMessage();
        }
        boolean staged = h.path() == KvPathKind.PUT_SIGNAL || h.path() == KvPathKind.SEND_RECV;
        if (refusal.isEmpty() && staged && slotBytes == 0) refusal = "the receiver's pool has no staging area for " + h.path();
        if (refusal.isEmpty() && closing) refusal = "the receiver is closing";
        s.link.send(new Welcome(pool.communicator().rank(), pool.layout(), pool.windowBase() + pool.stagingOffset(),
                slotBytes, refusal));
        if (!refusal.isEmpty()) return;
        s.rank = h.rank();
        s.hello = h;
        s.pieceBytes = Math.min(slotBytes, h.slotBytes());
        senders.add(s);
    }

    private void onAnnounce(Sender s, Announce a) {
        ReceivingRequest r = new ReceivingRequest(a.id(), a.name(), a.tokens(), pool.layout().blocksFor(a.tokens()));
        s.requests.put(r.id, r);
        r.deadline = KvTimers.after(Duration.ofMillis(a.deadlineMillis()), () -> run(() -> fail(s, r, KvFailure.DEADLINE,
                "not usable within its deadline of " + a.deadlineMillis() + " ms", -1)));
        if (r.blocksNeeded > pool.layout().blocks() || r.blocksNeeded > options.maxGrantedBlocks()) {
            fail(s, r, KvFailure.REFUSED, r.tokens + " tokens need " + r.blocksNeeded + " blocks: more than the pool's "
                    + pool.layout().blocks() + " or the limit of " + options.maxGrantedBlocks() + " in flight", -1);
            return;
        }
        if (closing) {
            fail(s, r, KvFailure.CLOSED, "the receiver is closing", -1);
            return;
        }
        s.queued.add(r);
        waiting++;
        grant();
    }

    /**
     * Grants blocks to queued requests, one sender after another, while the allocator and the limit allow. A sender
     * whose request cannot be granted yet keeps its turn: it goes first when blocks come back.
     */
    private void grant() {
        while (!closing) {
            Sender s = inTurn(x -> !x.queued.isEmpty());
            if (s == null) return;
            ReceivingRequest r = s.queued.peek();
            if (grantedBlocks + r.blocksNeeded > options.maxGrantedBlocks()) return;
            int[] blocks = allocator.allocate(r.blocksNeeded);
            if (blocks == null) return; // onFree asks again
            s.queued.poll();
            waiting--;
            turnTaken(s);
            grantedBlocks += r.blocksNeeded;
            grantTo(s, r, blocks);
        }
    }

    private void grantTo(Sender s, ReceivingRequest r, int[] blocks) {
        r.blocks = blocks;
        r.state = ReceivingRequest.State.GRANTED;
        r.grantedNanos = System.nanoTime();
        int layers = pool.layout().layers();
        r.usable = new boolean[layers];
        r.incoming = new KvIncoming(this, r.id, r.name, s.rank, r.tokens, blocks, layers);
        KvPathKind path = s.hello.path();
        if (path == KvPathKind.PUT_SIGNAL || path == KvPathKind.SEND_RECV) {
            KvLayout from = s.hello.layout();
            r.geometry = KvGeometry.of("KV request " + r.name, from, KvGeometry.sourceUnknown(from, r.tokens), pool.layout(),
                    blocks, r.tokens);
            r.pieces = r.geometry.pieces(s.pieceBytes);
            r.piecesPerTensor = r.pieces.size();
            r.landed = new int[layers];
        }
        if (signalled(s) && signals.canArm()) {
            r.armed = signals.take();
            s.link.send(new Grant(r.id, blocks, r.armed.signalOffset(), r.armed.generation()));
            try {
                // Before the application hears of the request, so that each layer's event is recorded when it can
                // wait for it.
                signals.enqueueWaits(s.rank, r.armed);
                r.incoming.signalled(r.armed.events());
            } catch (RuntimeException e) {
                fail(s, r, KvFailure.TRANSFER_FAILED, "enqueueing the device-side layer waits failed: " + e.getMessage(), -1);
            }
        } else {
            s.link.send(new Grant(r.id, blocks, -1, 0));
        }
        try {
            onIncoming.accept(r.incoming);
        } catch (RuntimeException e) {
            LOG.warn("{} KV receiver: onIncoming failed for {}", pool.communicator().describe(), r.name, e);
        }
    }

    /**
     * Whether {@code s}'s layers are signalled on the device: its path is the one that raises signals here, and it is
     * another rank (see {@link KvLayerSignals} for why not this one).
     */
    private boolean signalled(Sender s) {
        return signals != null && s.hello.path() == signals.kind() && s.rank != pool.communicator().rank();
    }

    /** The request ended, done or failed: its device-side waits pass (without data, if it failed), its row goes back. */
    private void endSignals(ReceivingRequest r, @Nullable KvTransferException failure) {
        if (r.incoming != null) r.incoming.ended(failure);
        if (r.armed == null) return;
        if (failure != null) signals.cancel(r.armed);
        signals.release(r.armed);
        r.armed = null;
    }

    /**
     * The first sender from the one whose turn it is that {@code has} something, or null. The turn moves on only when
     * that sender was given something ({@link #turnTaken}): an attempt that gives nothing (no blocks free yet) must not
     * pass its turn to the next sender, or whoever is next after a fixed number of such attempts gets every grant.
     */
    private @Nullable Sender inTurn(java.util.function.Predicate<Sender> has) {
        for (int i = 0; i < senders.size(); i++) {
            Sender s = senders.get((nextSender + i) % senders.size());
            if (has.test(s)) return s;
        }
        return null;
    }

    /** {@code s} was given a grant or a slot: the turn passes to the sender after it. */
    private void turnTaken(Sender s) {
        nextSender = (senders.indexOf(s) + 1) % senders.size();
    }

    /** Staged paths: hands free slots to the senders' wants, one sender after another. */
    private void grantSlots() {
        while (!freeSlots.isEmpty()) {
            Sender s = inTurn(x -> !x.wants.isEmpty());
            if (s == null) return;
            long[] want = s.wants.peek();
            ReceivingRequest r = s.requests.get(want[0]);
            if (r == null || r.ending()) {
                s.wants.poll();
                continue;
            }
            if (--want[1] == 0) s.wants.poll();
            turnTaken(s);
            int slot = freeSlots.poll();
            s.slotsHeld.add(slot);
            s.link.send(new Slot(r.id, slot));
        }
    }

    /**
     * A staged piece was issued into one of this rank's slots: receive it there and scatter it into the pool. A piece
     * in a slot the sender does not hold, or outside its request, comes from a broken sender: its link is dropped
     * before anything is issued (a receive or scatter for it would wait for data that never comes, or land outside the
     * request's blocks).
     */
    private void onPiece(Sender s, PieceSent p) {
        // On each refusal below the slot stays held, and onLost gives it back with the sender's others.
        if (!s.slotsHeld.contains(p.slot())) {
            onLost(s, "KV sender rank " + s.rank + " sent a piece in slot " + p.slot() + ", which it does not hold");
            return;
        }
        if (p.layer() < 0) { // the sender ended the request before filling the slot
            s.slotsHeld.remove(p.slot());
            freeSlot(p.slot());
            return;
        }
        ReceivingRequest r = s.requests.get(p.id());
        if (r == null || r.pieces == null) { // a piece always comes before the end it belongs to: a broken sender
            onLost(s, "KV sender rank " + s.rank + " sent a piece of unknown request " + p.id());
            return;
        }
        KvLayout l = pool.layout();
        if (p.layer() >= l.layers() || p.tensor() < 0 || p.tensor() >= l.tensors() || p.piece() < 0
                || p.piece() >= r.piecesPerTensor) {
            onLost(s, "KV sender rank " + s.rank + " sent piece " + p.piece() + " of layer " + p.layer() + ", tensor "
                    + p.tensor() + " of " + r.name + ", which has " + l.layers() + " layers of " + l.tensors() + " tensors in "
                    + r.piecesPerTensor + " piece(s) each");
            return;
        }
        s.slotsHeld.remove(p.slot());
        // Even a piece of a request that is ending is received: its put's signal or its send must be matched.
        KvGeometry piece = r.pieces.get(p.piece());
        StreamOperation op = s.hello.path() == KvPathKind.PUT_SIGNAL
                ? copies.waitAndScatter(r.name, p.layer(), p.tensor(), piece, p.slot(), slotBytes, s.rank)
                : copies.receiveAndScatter(r.name, p.layer(), p.tensor(), piece, p.slot(), slotBytes, s.rank);
        Work w;
        try {
            w = context.issue(op, Duration.ZERO);
        } catch (RuntimeException e) {
            freeSlot(p.slot());
            fail(s, r, KvFailure.TRANSFER_FAILED, "receiving a piece failed: " + e.getMessage(), p.layer());
            return;
        }
        r.inFlight++;
        w.whenComplete((v, error) -> run(() -> {
            r.inFlight--;
            freeSlot(p.slot());
            if (error != null) {
                fail(s, r, KvFailure.TRANSFER_FAILED, Errors.unwrap(error).getMessage(), p.layer());
            } else if (!r.ending() && ++r.landed[p.layer()] == pool.layout().tensors() * r.piecesPerTensor) {
                layerUsable(s, r, p.layer());
            }
            tryFinish(s, r);
        }));
    }

    private void freeSlot(int slot) {
        freeSlots.add(slot);
        grantSlots();
    }

    private void layerUsable(Sender s, ReceivingRequest r, int layer) {
        if (layer < 0 || layer >= r.usable.length || r.usable[layer]) {
            fail(s, r, KvFailure.TRANSFER_FAILED, "the sender reported layer " + layer + " twice or out of range", layer);
            return;
        }
        r.usable[layer] = true;
        r.layersUsable++;
        r.incoming.layers[layer].complete(null);
        if (r.layersUsable == r.usable.length) tryFinish(s, r);
    }

    // ---- ending

    void cancel(KvIncoming incoming) {
        run(() -> {
            for (Sender s : senders) {
                ReceivingRequest r = s.requests.get(incoming.id());
                if (r != null && r.incoming == incoming) {
                    fail(s, r, KvFailure.CANCELLED_BY_RECEIVER, "cancelled by the application", -1);
                    return;
                }
            }
        });
    }

    private void fail(Sender s, ReceivingRequest r, KvFailure failure, String detail, int layer) {
        fail(s, r, failure, detail, layer, true);
    }

    /** Ends {@code r}: stops, tells the sender unless it is the one that ended it, finishes once nothing is in flight. */
    private void fail(Sender s, ReceivingRequest r, KvFailure failure, String detail, int layer, boolean tellSender) {
        if (r.ending()) return;
        boolean queued = r.state == ReceivingRequest.State.QUEUED;
        r.state = ReceivingRequest.State.ENDING;
        r.failure = new KvTransferException(r.name, failure, layer, -1, detail, null);
        if (s.queued.remove(r)) waiting--;
        if (s.lost != null) {
            r.peerDrained = true;
        } else if (tellSender) {
            s.link.send(new Cancel(r.id, failure, detail));
        }
        // A request without blocks has nothing of the sender's in flight to wait for.
        if (queued) r.peerDrained = true;
        tryFinish(s, r);
    }

    private void tryFinish(Sender s, ReceivingRequest r) {
        if (r.state == ReceivingRequest.State.FINISHED || r.inFlight > 0) return;
        if (r.state == ReceivingRequest.State.ENDING) {
            if (!r.drainedSent && s.lost == null) s.link.send(new Cancelled(r.id)); // nothing of ours is in flight
            r.drainedSent = true;
            if (!r.peerDrained) return;
            finish(s, r);
            if (r.blocks != null) {
                grantedBlocks -= r.blocksNeeded;
                allocator.free(r.blocks); // nothing writes into them any more
            }
            endSignals(r, r.failure);
            if (r.incoming != null) {
                for (CompletableFuture<Void> l : r.incoming.layers) l.completeExceptionally(r.failure);
                r.incoming.done.completeExceptionally(r.failure);
            }
            grant();
            return;
        }
        if (r.state == ReceivingRequest.State.GRANTED && r.layersUsable == r.usable.length) {
            finish(s, r);
            grantedBlocks -= r.blocksNeeded; // the application's from now on
            endSignals(r, null);
            long bytes = pool.layout().layers() * pool.layout().tensors() * (long) r.tokens * pool.layout().tokenBytes();
            // Completed before the sender is told: whoever sees the sender's done() finds decode's done already.
            r.incoming.done.complete(new KvReceived(r.name, s.rank, r.blocks, bytes, System.nanoTime() - r.grantedNanos));
            s.link.send(new Complete(r.id));
            grant();
        }
    }

    private void finish(Sender s, ReceivingRequest r) {
        r.state = ReceivingRequest.State.FINISHED;
        if (r.deadline != null) r.deadline.cancel(false);
        s.requests.remove(r.id);
        if (closing) tryClosed();
    }

    private void onLost(Sender s, String why) {
        if (s.lost != null) return;
        s.lost = why;
        s.link.close(why);
        for (ReceivingRequest r : new ArrayList<>(s.requests.values())) {
            r.peerDrained = true; // a sender that is gone writes nothing more
            fail(s, r, KvFailure.PEER_LOST, why, -1);
            tryFinish(s, r);
        }
        s.wants.clear();
        // Slots it held and never filled come back: a sender that is gone issues nothing more into them.
        for (int slot : s.slotsHeld) freeSlots.add(slot);
        s.slotsHeld.clear();
        senders.remove(s);
        grantSlots();
        if (closing) tryClosed();
    }

    // ---- closing

    @Override
    public void communicatorEnding() {
        closeAsync();
    }

    /** Ends every request ({@link KvFailure#CLOSED}), waits until none is in flight, then closes the links. Idempotent. */
    public CompletableFuture<Void> closeAsync() {
        if (!closing) {
            closing = true;
            run(() -> {
                for (Sender s : new ArrayList<>(senders)) {
                    for (ReceivingRequest r : new ArrayList<>(s.requests.values())) {
                        fail(s, r, KvFailure.CLOSED, "the receiver closed", -1);
                    }
                }
                tryClosed();
            });
        }
        return closed.copy();
    }

    private void tryClosed() {
        if (closed.isDone()) return;
        for (Sender s : senders) if (!s.requests.isEmpty()) return;
        for (Sender s : senders) {
            s.link.send(new Goodbye("the receiver closed"));
            s.link.close("the receiver closed");
        }
        senders.clear();
        stop();
        if (signals == null) {
            closed.complete(null);
        } else {
            signals.closeAsync().whenComplete((v, e) -> closed.complete(null));
        }
    }

    private void stop() {
        KvLinks.Listening l = listening;
        if (l != null) l.close();
        endpoints.remove(this);
        thread.stop();
    }

    /** {@link #closeAsync()}, waiting for it; never on jccl's event thread. */
    @Override
    public void close() {
        closeAsync().join();
    }

    @Override
    public String toString() {
        return "KvReceiver[" + pool.communicator().describe() + "]";
    }
}
