package org.jccl.rma.kv;

/**
 * What a sender reports once a request's every layer is usable on the receiver.
 *
 * @param request       the request's name
 * @param receiver      the decode rank
 * @param path          how the data moved
 * @param bytes         the bytes moved, every layer and tensor: whole blocks where both sides have the same tokens per
 *                      block and heads (the last block's unused tail too, so up to a block more than the tokens fill,
 *                      which {@link KvReceived#bytes()} counts), else exactly the rows of the tokens
 * @param waitedNanos   from {@link KvSender#send} to the grant of destination blocks (backpressure, when large)
 * @param transferNanos from the first layer's copy being issued to the receiver's word that every layer is usable
 */
public record KvDelivered(String request, int receiver, KvPathKind path, long bytes, long waitedNanos, long transferNanos) {
    /** Bytes per second over {@link #transferNanos}. */
    public double bytesPerSecond() {
        return transferNanos == 0 ? 0 : bytes * 1e9 / transferNanos;
    }
}
