package org.jccl.rma.kv;

/**
 * One request's copies as a direct path ({@link KvDirectPath}) sees them: for each tensor of each layer, the same
 * segments (source offset, destination offset, bytes), relative to where that tensor starts in each rank's pool. Both
 * pools start at the same offset of their rank's KV window ({@link KvPool#windowBase()}).
 *
 * @param request     the request's name, for messages
 * @param peer        the destination rank
 * @param source      this rank's layout
 * @param destination the peer's layout
 * @param segments    {@code 3 × n} values: source offset, destination offset, bytes of each segment
 * @param signalOffset where a path that signals layers ({@link KvDirectPath#signalsLayers()}) raises layer {@code l}'s
 *                     signal: the word at {@code signalOffset + 8 l} of the peer's window; {@code -1}: none
 * @param signalValue  the value it stores there: the request's generation at the receiver (words only grow)
 */
public record KvPlan(String request, int peer, KvLayout source, KvLayout destination, long[] segments, long signalOffset,
                     long signalValue) {
    public KvPlan {
        segments = segments.clone();
    }

    /** The number of segments. */
    public int count() {
        return segments.length / 3;
    }

    /** The bytes one layer moves (every tensor). */
    public long layerBytes() {
        long total = 0;
        for (int i = 2; i < segments.length; i += 3) total += segments[i];
        return total * source.tensors();
    }

    @Override
    public long[] segments() {
        return segments.clone();
    }
}
