package org.jccl.rma.kv;

/**
 * What a sender reports once a request's every layer is usable on the receiver.
 *
 * @param request       the request's name
 * @param receiver      the decode rank
 * @param path          how the data moved
 * @param bytes         the bytes of the request that decode holds, every layer and tensor (its tokens' rows, as
 *                      {@link KvReceived#bytes()} counts them; with equal block sizes the copies move whole blocks,
 *                      the last one's unused tail too)
 * @param waitedNanos   from {@link KvSender#send} to the grant of destination blocks (backpressure, when large)
 * @param transferNanos from the first layer's copy being issued to the receiver's word that every layer is usable
 */
public record KvDelivered(String request, int receiver, KvPathKind path, long bytes, long waitedNanos, long transferNanos) {
    /** Bytes per second over {@link #transferNanos}. */
    public double bytesPerSecond() {
        return transferNanos == 0 ? 0 : bytes * 1e9 / transferNanos;
    }
}
