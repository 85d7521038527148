package org.jccl.rma.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jccl.core.error.InvalidArgumentException;

/**
 * What one request moves in each tensor of each layer, as copy segments (source offset, destination offset, bytes)
 * relative to the start of that tensor in each pool. The same for every layer and tensor, since every tensor of a
 * pool is laid out alike. Three shapes, from fast to general:
 * <ul>
 *   <li>same tokens per block and the same heads: one segment per block, the whole block;</li>
 *   <li>other tokens per block, the same heads: one segment per run of tokens contiguous on both sides;</li>
 *   <li>the decode rank holds a share of the prefill rank's heads: one segment per token, its share of the row.</li>
 * </ul>
 * Checked when made, before anything is sent: a bad or repeated block id, a layout that cannot exchange blocks, or a
 * token count the ids do not cover is refused with the request's name. The receiver, which does not know the source
 * ids, makes the same segments from {@link #sourceUnknown}: only destination offsets and lengths matter to it.
 */
final class KvGeometry {
    /** {@code 3 × count} values: source offset, destination offset, bytes of each segment. */
    private final long[] segments;
    private final long bytes;

    private KvGeometry(long[] segments) {
        this.segments = segments;
        long total = 0;
        for (int i = 2; i < segments.length; i += 3) total += segments[i];
        this.bytes = total;
    }

    /** Refuses layouts that cannot exchange blocks at all, whatever the request. */
    static void checkCompatible(KvLayout source, KvLayout destination) {
        if (source.layers() != destination.layers() || source.tensors() != destination.tensors()
                || source.headDim() != destination.headDim() || source.type() != destination.type()) {
            throw new InvalidArgumentException("KV layouts cannot exchange blocks: prefill " + source + ", decode "
                    + destination + " (layers, tensors, headDim and type must agree)");
        }
        int from = destination.headOffset() - source.headOffset();
        if (from < 0 || from + destination.kvHeads() > source.kvHeads()) {
            throw new InvalidArgumentException("the decode rank holds KV heads [" + destination.headOffset() + ", "
                    + (destination.headOffset() + destination.kvHeads()) + "), which the prefill rank's ["
                    + source.headOffset() + ", " + (source.headOffset() + source.kvHeads()) + ") do not cover: decode"
                    + " heads must come from one prefill rank (decode TP a multiple of prefill TP)");
        }
    }

    /**
     * The segments of a request of {@code tokens} tokens from {@code sourceBlocks} of {@code source}'s pool into
     * {@code destinationBlocks} of {@code destination}'s.
     *
     * @throws InvalidArgumentException for ids outside a pool, repeated destination ids, or too few or too many ids
     */
    static KvGeometry of(String request, KvLayout source, int[] sourceBlocks, KvLayout destination, int[] destinationBlocks,
                         int tokens) {
        checkCompatible(source, destination);
        if (tokens <= 0) throw new InvalidArgumentException(request + ": a request needs at least one token, not " + tokens);
        checkIds(request, "source", sourceBlocks, source.blocksFor(tokens), source.blocks());
        checkIds(request, "destination", destinationBlocks, destination.blocksFor(tokens), destination.blocks());
        int headShift = destination.headOffset() - source.headOffset();
        boolean sameHeads = headShift == 0 && source.kvHeads() == destination.kvHeads();
        if (sameHeads && source.tokensPerBlock() == destination.tokensPerBlock()) {
            long b = source.blockBytes();
            long[] s = new long[3 * sourceBlocks.length];
            for (int i = 0; i < sourceBlocks.length; i++) {
                s[3 * i] = sourceBlocks[i] * b;
                s[3 * i + 1] = destinationBlocks[i] * b;
                s[3 * i + 2] = b;
            }
            return new KvGeometry(s);
        }
        List<long[]> runs = new ArrayList<>();
        int st = source.tokensPerBlock();
        int dt = destination.tokensPerBlock();
        long rowBytes = destination.tokenBytes(); // what a token moves: the decode rank's heads
        long shiftBytes = headShift * source.headBytes();
        int t = 0;
        while (t < tokens) {
            int run = sameHeads ? Math.min(Math.min(st - t % st, dt - t % dt), tokens - t) : 1;
            long src = sourceBlocks[t / st] * source.blockBytes() + (t % st) * source.tokenBytes() + shiftBytes;
            long dst = destinationBlocks[t / dt] * destination.blockBytes() + (t % dt) * destination.tokenBytes();
            runs.add(new long[] {src, dst, run * rowBytes});
            t += run;
        }
        long[] s = new long[3 * runs.size()];
        for (int i = 0; i < runs.size(); i++) System.arraycopy(runs.get(i), 0, s, 3 * i, 3);
        return new KvGeometry(s);
    }

    private static void checkIds(String request, String side, int[] ids, int needed, int poolBlocks) {
        if (ids.length != needed) {
            throw new InvalidArgumentException(request + ": the " + side + " side needs " + needed + " block id(s) for its"
                    + " tokens, not " + ids.length);
        }
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] < 0 || ids[i] >= poolBlocks) {
                throw new InvalidArgumentException(request + ": " + side + " block " + ids[i] + " (at " + i + ") is outside"
                        + " the pool's 0.." + (poolBlocks - 1));
            }
        }
        int[] sorted = ids.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] == sorted[i - 1]) {
                throw new InvalidArgumentException(request + ": " + side + " block " + sorted[i] + " is given twice");
            }
        }
    }

    /** The source ids a receiver uses in place of the sender's: any distinct ids give the same destinations and lengths. */
    static int[] sourceUnknown(KvLayout source, int tokens) {
        int[] ids = new int[source.blocksFor(tokens)];
        for (int i = 0; i < ids.length; i++) ids[i] = i;
        return ids;
    }

    int count() {
        return segments.length / 3;
    }

    long source(int i) {
        return segments[3 * i];
    }

    long destination(int i) {
        return segments[3 * i + 1];
    }

    long length(int i) {
        return segments[3 * i + 2];
    }

    /** The bytes one tensor of one layer moves. */
    long bytes() {
        return bytes;
    }

    /** The raw segments, {@code 3 × count()} values (for kernels, which take them as a table). */
    long[] table() {
        return segments.clone();
    }

    /**
     * The segments cut into pieces of at most {@code maxBytes} (a longer segment is split), each piece a geometry of
     * its own, in order: what a staged path moves through one staging slot at a time.
     */
    List<KvGeometry> pieces(long maxBytes) {
        if (maxBytes <= 0) throw new IllegalArgumentException("maxBytes " + maxBytes);
        List<KvGeometry> out = new ArrayList<>();
        List<long[]> current = new ArrayList<>();
        long filled = 0;
        for (int i = 0; i < count(); i++) {
            long src = source(i);
            long dst = destination(i);
            long left = length(i);
            while (left > 0) {
                long take = Math.min(left, maxBytes - filled);
                current.add(new long[] {src, dst, take});
                src += take;
                dst += take;
                left -= take;
                filled += take;
                if (filled == maxBytes) {
                    out.add(flatten(current));
                    current.clear();
                    filled = 0;
                }
            }
        }
        if (!current.isEmpty()) out.add(flatten(current));
        return out;
    }

    private static KvGeometry flatten(List<long[]> parts) {
        long[] s = new long[3 * parts.size()];
        for (int i = 0; i < parts.size(); i++) System.arraycopy(parts.get(i), 0, s, 3 * i, 3);
        return new KvGeometry(s);
    }
}
