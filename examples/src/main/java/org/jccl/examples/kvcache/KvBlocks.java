package org.jccl.examples.kvcache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The KV-cache blocks of the example: deterministic content per (request, layer, block), so the decode side can
 * check every byte it received without the prefill side telling it anything but the schedule.
 */
final class KvBlocks {
    private KvBlocks() {
    }

    /** Block {@code index} of the schedule: requests interleaved, layer by layer, as a prefill batch produces them. */
    static long[] coordinates(long index, int requests, int layers, int blocksPerLayer) {
        long perRequestLayer = (long) blocksPerLayer;
        long round = index / (requests * perRequestLayer);
        long within = index % (requests * perRequestLayer);
        int request = (int) (within / perRequestLayer);
        int block = (int) (within % perRequestLayer);
        return new long[] {request, round, block};
    }

    /** The {@code k}-th long of the block of (request, layer, block). */
    static long value(long request, long layer, long block, long k) {
        long x = request * 0x9E3779B97F4A7C15L ^ layer * 0xC2B2AE3D27D4EB4FL ^ block * 0x165667B19E3779F9L ^ k;
        x ^= x >>> 31;
        x *= 0xBF58476D1CE4E5B9L;
        return x ^ (x >>> 29);
    }

    /** The whole block's bytes. */
    static ByteBuffer content(long request, long layer, long block, int bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        for (int k = 0; k < bytes / 8; k++) b.putLong(8 * k, value(request, layer, block, k));
        return b;
    }

    /** The number of longs of {@code data} that differ from the block of (request, layer, block). */
    static int wrong(ByteBuffer data, long request, long layer, long block) {
        int wrong = 0;
        for (int k = 0; k < data.capacity() / 8; k++) if (data.getLong(8 * k) != value(request, layer, block, k)) wrong++;
        return wrong;
    }
}
