package org.jccl.rma.kv;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.error.InvalidArgumentException;

/**
 * One request a KV receiver granted blocks to: which blocks, a future per layer that completes when that layer is
 * usable in the pool, and {@link #done()} when every layer is. On failure (a {@link KvTransferException}) the blocks go
 * back to the allocator once nothing is in flight on either side; on success they are the application's.
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
        if (layer < 0 || layer >= layers.length) {
            throw new InvalidArgumentException("KV request " + request + " has no layer " + layer + " (0.." + (layers.length - 1) + ")");
        }
        return layers[layer].copy();
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
