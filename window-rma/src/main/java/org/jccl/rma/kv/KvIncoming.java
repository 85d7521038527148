package org.jccl.rma.kv;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.Event;
import org.jccl.core.Stream;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;

/**
 * One request a KV receiver granted blocks to: which blocks, a future per layer that completes when that layer is
 * usable in the pool, and {@link #done()} when every layer is. On failure (a {@link KvTransferException}) the blocks go
 * back to the allocator once nothing is in flight on either side; on success they are the application's.
 *
 * <p>Where another rank's sender writes straight into this pool with a kernel ({@link KvPathKind#LSA_KERNEL}), each
 * layer is also signalled on the device (while the receiver has room for the waits, {@link #signalsLayersOnDevice()}):
 * {@link #layerOn} makes an application's stream wait for it there, so that decode's kernels for a layer start as soon
 * as it landed, without waiting for the host to hear of it.
 */
public final class KvIncoming {
    private final KvReceiver receiver;
    private final long id;
    private final String request;
    private final int sender;
    private final int tokens;
    private final int[] blocks;
    final CompletableFuture<Void>[] layers;
    final CompletableFuture<KvReceived> done = new CompletableFuture<>();
    /** Each layer's event, recorded after its device-side wait; null without device signals. Guarded by this. */
    private Event @Nullable [] layerEvents;
    private boolean signalled;
    private boolean ended;
    private @Nullable KvTransferException failure;

    @SuppressWarnings("unchecked")
    KvIncoming(KvReceiver receiver, long id, String request, int sender, int tokens, int[] blocks, int layers) {
        this.receiver = receiver;
        this.id = id;
        this.request = request;
        this.sender = sender;
        this.tokens = tokens;
        this.blocks = blocks.clone();
        this.layers = new CompletableFuture[layers];
        for (int l = 0; l < layers; l++) this.layers[l] = new CompletableFuture<>();
    }

    long id() {
        return id;
    }

    /** The request's name, as its sender gave it. */
    public String request() {
        return request;
    }

    /** The prefill rank it comes from. */
    public int sender() {
        return sender;
    }

    public int tokens() {
        return tokens;
    }

    /** The destination blocks granted to it, in token order. */
    public int[] blocks() {
        return blocks.clone();
    }

    /** The number of layers, each with its {@link #layer} future. */
    public int layerCount() {
        return layers.length;
    }

    /** Completes when {@code layer} is usable in the pool; fails like {@link #done()}. */
    public CompletableFuture<Void> layer(int layer) {
        checkLayer(layer);
        return layers[layer].copy();
    }

    private void checkLayer(int layer) {
        if (layer < 0 || layer >= layers.length) {
            throw new InvalidArgumentException("KV request " + request + " has no layer " + layer + " (0.." + (layers.length - 1) + ")");
        }
    }

    /**
     * Whether {@link #layerOn} can wait for layers on the device: the request comes from another rank over the LSA
     * kernel path, and was granted while the receiver had room for its waits (at most 128 layers' at a time).
     */
    public synchronized boolean signalsLayersOnDevice() {
        return signalled;
    }

    /**
     * Makes the work enqueued on {@code stream} after this call wait, on the device, until {@code layer} landed in the
     * pool; the calling thread does not wait. Once the request has completed it does nothing (every layer is there). If
     * the request fails first, the stream goes on without the layer's data when the request ends: {@link #done()}
     * fails, and a call after that throws its {@link KvTransferException}.
     *
     * @throws InvalidUsageException    where the request's path raises no device signals ({@link
     *                                  #signalsLayersOnDevice()}): wait for {@link #layer} instead
     * @throws InvalidArgumentException for a layer out of range
     */
    public synchronized void layerOn(int layer, Stream stream) {
        Errors.requireArgument(stream, "stream");
        checkLayer(layer);
        if (failure != null) throw failure;
        if (ended) return;
        if (layerEvents == null) {
            throw new InvalidUsageException("KV request " + request + " has no device signals (only requests from another"
                    + " rank over the LSA kernel path have them, see signalsLayersOnDevice()); wait for layer(" + layer
                    + ") instead");
        }
        stream.waitFor(layerEvents[layer]);
    }

    /** The receiver enqueued the device-side waits, each layer's event recorded after its own. */
    synchronized void signalled(Event[] events) {
        this.layerEvents = events.clone();
        this.signalled = true;
    }

    /** The request ended (failed where {@code failure} is not null): its events may now be recorded for another. */
    synchronized void ended(@Nullable KvTransferException failure) {
        this.ended = true;
        this.failure = failure;
        this.layerEvents = null;
    }

    /** Completes when every layer is usable, or fails with a {@link KvTransferException}. */
    public CompletableFuture<KvReceived> done() {
        return done.copy();
    }

    /** Ends the request ({@link KvFailure#CANCELLED_BY_RECEIVER}); its blocks go back once nothing is in flight. */
    public void cancel() {
        receiver.cancel(this);
    }

    @Override
    public String toString() {
        return "KvIncoming[" + request + " from rank " + sender + ", " + tokens + " tokens in " + blocks.length + " blocks]";
    }
}
