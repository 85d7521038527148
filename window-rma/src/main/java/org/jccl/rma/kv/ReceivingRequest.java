package org.jccl.rma.kv;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * A receiver's state of one request, touched only on its receiver's thread: queued (announced, waiting for blocks),
 * granted (layers landing), ending (waiting until nothing is in flight on either side), finished.
 */
final class ReceivingRequest {
    enum State { QUEUED, GRANTED, ENDING, FINISHED }

    final long id;
    final String name;
    final int tokens;
    final int blocksNeeded;
    final long announcedNanos = System.nanoTime();
    State state = State.QUEUED;
    @Nullable ScheduledFuture<?> deadline;

    int @Nullable [] blocks;
    @Nullable KvIncoming incoming;
    @Nullable KvGeometry geometry;
    @Nullable List<KvGeometry> pieces;
    /** Staged paths: pieces per tensor; pieces landed per layer (of tensors × pieces). */
    int piecesPerTensor;
    int @Nullable [] landed;
    boolean @Nullable [] usable;
    int layersUsable;
    int inFlight;
    long grantedNanos;
    /** Its row of device-side layer signals, while it has one. */
    KvLayerSignals.@Nullable Armed armed;

    @Nullable KvTransferException failure;
    boolean peerDrained;
    boolean drainedSent;

    ReceivingRequest(long id, String name, int tokens, int blocksNeeded) {
        this.id = id;
        this.name = name;
        this.tokens = tokens;
        this.blocksNeeded = blocksNeeded;
    }

    boolean ending() {
        return state == State.ENDING || state == State.FINISHED;
    }
}
