package org.jccl.rma.kv;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * A sender's state of one request, touched only on its sender's thread: waiting for the link, announced, granted
 * (layers going as they become ready), ending (failed or cancelled: waiting until nothing is in flight on either
 * side), finished.
 */
final class SendingRequest {
    enum State { WAITING_LINK, ANNOUNCED, GRANTED, ENDING, FINISHED }

    /** A staged piece of a ready layer, waiting for a receiver slot. */
    record Piece(int layer, int tensor, int index) {
    }

    final KvSend handle;
    final KvRequest request;
    final long id;
    final long startedNanos = System.nanoTime();
    State state = State.WAITING_LINK;
    @Nullable ScheduledFuture<?> deadline;

    /** Layers ready and not yet issued, in the order they became ready; their events, by layer. */
    final ArrayDeque<KvLayer> readyLayers = new ArrayDeque<>();

    int @Nullable [] destination;
    @Nullable KvGeometry geometry;
    /** Direct paths: the prepared copies. */
    KvDirectPath.@Nullable Prepared prepared;
    /** Staged paths: each tensor's pieces (the same for every layer and tensor), and the pieces waiting for a slot. */
    @Nullable List<KvGeometry> pieces;
    final ArrayDeque<Piece> waitingPieces = new ArrayDeque<>();

    long grantedNanos;
    long firstIssueNanos;
    int layersIssued;
    int inFlight;
    boolean completeReceived;

    /** Set once ending: the failure {@link KvSend#done()} gets. */
    @Nullable KvTransferException failure;
    /** Ending: whether the peer said nothing of this request is in flight on its side (or can no longer say). */
    boolean peerDrained;
    boolean drainedSent;

    SendingRequest(KvSend handle) {
        this.handle = handle;
        this.request = handle.request();
        this.id = handle.id();
    }

    boolean ending() {
        return state == State.ENDING || state == State.FINISHED;
    }
}
