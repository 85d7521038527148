package org.jccl.rma.kv;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Event;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jspecify.annotations.Nullable;

/**
 * A receiver's layer signals on a direct path that raises them on the device ({@link KvDirectPath#signalsLayers()}):
 * each request in flight gets a row of the pool's signal area ({@link KvPool#signalOffset}) and a generation, the value
 * the sender's kernel stores into the row's word of each layer that landed. For every layer the receiver enqueues, on
 * a stream of its own per sender, a device-side wait for that word and records an event after it: an application's
 * stream that waits for the event ({@link KvIncoming#layerOn}) runs its next work once the layer is in the pool, with
 * no host in between. Ending a request sets its cancel word (pinned host memory the waits also read) to its
 * generation, so every wait of it passes; rows are reused with higher generations, so no word is ever reset.
 *
 * <p>The waits are enqueued ahead of the data, so they are bounded: at most {@link #MAX_ARMED_LAYERS} at a time (a
 * request of more layers may be alone), and a request granted beyond that goes without device signals. Unbounded,
 * they filled the driver's launch queue on an H200 (480 waits and their events): a launch then blocks in the driver
 * until a wait passes, and a blocked receiver thread cannot end the requests whose cancel would let them pass. A
 * request to this rank itself never gets them: its waits, enqueued before its own sender's kernels on the same GPU,
 * could share a hardware queue with them and hold them back for ever.
 *
 * <p>Used on the receiver's thread only.
 */
final class KvLayerSignals {
    /** Layer waits (each a kernel and an event record) a receiver keeps enqueued at most. */
    static final int MAX_ARMED_LAYERS = 128;
    private final KvPool pool;
    private final KvDirectPath path;
    private final Backend backend;
    private final int layers;
    /** Layer waits enqueued and not yet given back with their request. */
    private int armedLayers;
    private final ArrayDeque<Integer> freeRows = new ArrayDeque<>();
    private final long[] generations = new long[KvPool.SIGNAL_ROWS];
    private final Event[][] events = new Event[KvPool.SIGNAL_ROWS][];
    /** One 64-bit word per row: the highest generation of that row that was ended. */
    private final Buffer cancelWords;
    /** Per sender rank: the stream its requests' waits go on, and the last of them (for close). */
    private final Map<Integer, Stream> streams = new HashMap<>();
    private final Map<Integer, Work> lastWaits = new HashMap<>();

    /** A request's row and generation while it is in flight. */
    record Armed(int row, long generation, long signalOffset, Event[] events) {
    }

    KvLayerSignals(KvPool pool, KvDirectPath path) {
        this.pool = pool;
        this.path = path;
        this.backend = pool.communicator().backend();
        this.layers = pool.layout().layers();
        this.cancelWords = backend.allocatePinned(8L * KvPool.SIGNAL_ROWS);
        cancelWords.write(0, new long[KvPool.SIGNAL_ROWS]);
        for (int r = 0; r < KvPool.SIGNAL_ROWS; r++) freeRows.add(r);
    }

    KvPathKind kind() {
        return path.kind();
    }

    /** Whether a request's waits fit: a free row, and its layers within the bound (or no other request armed). */
    boolean canArm() {
        return !freeRows.isEmpty() && (armedLayers == 0 || armedLayers + layers <= MAX_ARMED_LAYERS);
    }

    /** Takes a row for a request; {@link #canArm()} must be true. */
    Armed take() {
        int row = freeRows.poll();
        armedLayers += layers;
        if (events[row] == null) {
            events[row] = new Event[layers];
            for (int l = 0; l < layers; l++) events[row][l] = backend.createEvent(pool.communicator().device(), false);
        }
        return new Armed(row, ++generations[row], pool.signalOffset(row), events[row]);
    }

    /** The pinned word the waits of {@code a} also read: set to its generation when it ends without its layers. */
    Buffer cancelWord(Armed a) {
        return cancelWords.slice(8L * a.row(), 8);
    }

    /** Enqueues the request's waits on the stream of {@code sender}, each layer's event recorded after its wait. */
    void enqueueWaits(int sender, Armed a) {
        Stream stream = streams.computeIfAbsent(sender, s -> backend.createStream(pool.communicator().device()));
        Buffer cancel = cancelWord(a);
        for (int l = 0; l < layers; l++) {
            // Kept as soon as it is enqueued: if a later one throws, close still waits for those before it.
            lastWaits.put(sender, path.awaitSignal(stream, a.signalOffset() + 8L * l, cancel, a.generation()));
            a.events()[l].record(stream);
        }
    }

    /** Lets every wait of the request pass (it ended without all of its layers). */
    void cancel(Armed a) {
        cancelWord(a).write(0, new long[] {a.generation()});
    }

    /** Gives the row back: the request ended and its application was told. */
    void release(Armed a) {
        freeRows.add(a.row());
        armedLayers -= layers;
    }

    /**
     * Once every wait enqueued has passed (the receiver ended every request, so their cancel words are set), frees the
     * streams, events and cancel words.
     */
    CompletableFuture<Void> closeAsync() {
        List<CompletableFuture<?>> waits = new ArrayList<>(lastWaits.values());
        return CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0])).handle((v, e) -> {
            streams.values().forEach(Stream::close);
            for (Event[] row : events) {
                if (row != null) for (Event ev : row) ev.close();
            }
            cancelWords.close();
            return null;
        });
    }

    /** For messages: e.g. {@code layer signals of LSA_KERNEL}. */
    @Override
    public String toString() {
        return "layer signals of " + path.kind();
    }

    static @Nullable KvLayerSignals of(KvPool pool) {
        for (KvPathKind kind : KvPathKind.values()) {
            KvDirectPath p = pool.directPath(kind);
            if (p != null && p.signalsLayers()) return new KvLayerSignals(pool, p);
        }
        return null;
    }
}
