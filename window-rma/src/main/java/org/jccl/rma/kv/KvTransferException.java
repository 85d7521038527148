package org.jccl.rma.kv;

import org.jccl.core.error.JcclException;
import org.jspecify.annotations.Nullable;

/**
 * A KV request ended without its data. Names the request, and the layer and block concerned where one is (else -1);
 * {@link #failure()} says why. Ends only that request: others keep going and the communicator stays usable, unless
 * the cause is the peer's loss or the communicator's end, which end every request with that peer.
 */
public final class KvTransferException extends JcclException {
    private final String request;
    private final KvFailure failure;
    private final int layer;
    private final int block;

    public KvTransferException(String request, KvFailure failure, int layer, int block, String message,
                               @Nullable Throwable cause) {
        super("KV request " + request + " " + failure.name().toLowerCase().replace('_', ' ') + where(layer, block) + ": " + message,
                cause);
        this.request = request;
        this.failure = failure;
        this.layer = layer;
        this.block = block;
    }

    private static String where(int layer, int block) {
        return (layer >= 0 ? " at layer " + layer : "") + (block >= 0 ? ", block " + block : "");
    }

    /** The request's name ({@link KvRequest#name()}). */
    public String request() {
        return request;
    }

    public KvFailure failure() {
        return failure;
    }

    /** The layer concerned, or -1. */
    public int layer() {
        return layer;
    }

    /** The block concerned (a destination block id for the receiver, a source block id for the sender), or -1. */
    public int block() {
        return block;
    }
}
