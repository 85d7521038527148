package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.floats;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Size arithmetic cannot wrap: every operation, fed counts, roots, peers and allToAllv displacements at and past the
 * edges of a long and of an int (where {@code count × ranks}, {@code count × element size} or
 * {@code count + displacement} overflows, negative ones, one element too many), is refused with an
 * {@link InvalidArgumentException} on the caller's thread before anything is enqueued, on a rank of three; the same
 * for stream copies and fills, buffer slices and reads. Afterwards a real all-reduce succeeds on every rank.
 */
class ExtremeArgumentsTest {
    private static final int RANKS = 3;
    private static final long BYTES = 192;
    private static final DataType[] TYPES = {DataType.INT8, DataType.FLOAT32, DataType.FLOAT64};
    private static final int[] BAD_RANKS = {-1, RANKS, Integer.MIN_VALUE, Integer.MAX_VALUE};

    private final List<Communicator> comms = new ArrayList<>();
    private final List<Buffer> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (Communicator c : comms) c.close();
        for (Buffer b : buffers) b.close();
    }

    private Buffer buffer() {
        Buffer b = host().allocate(0, BYTES);
        buffers.add(b);
        return b;
    }

    /** Counts that are negative, overflow a product or a sum with the rank count or element size, or are one too many. */
    private static long[] extremeCounts(DataType type) {
        long size = type.size();
        return new long[] {
            -1, Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE - 1,
            Long.MAX_VALUE / RANKS + 1,                  // count × ranks wraps
            Long.MAX_VALUE / size + 1,                   // count × element size wraps
            Long.MAX_VALUE / (RANKS * size) + 1,         // count × ranks × element size wraps
            (1L << 62) / size,                           // wraps to exactly 0 or a small number on some paths
            (1L << 32) + 1, Integer.MAX_VALUE + 1L,      // wraps an int
            BYTES / size + 1,                            // one element more than the buffers hold
        };
    }

    @Test
    void everyOperationRefusesExtremeCountsBeforeEnqueueing() throws Exception {
        comms.addAll(host().initAll(RANKS).get(30, TimeUnit.SECONDS));
        Communicator c = comms.get(1);
        Buffer send = buffer();
        Buffer recv = buffer();
        Buffer bias = buffer();
        int checked = 0; // every (type, count, kind, peer) case below, so that none is silently skipped
        for (DataType type : TYPES) {
            for (long count : extremeCounts(type)) {
                for (OpKind kind : OpKind.values()) {
                    if (kind == OpKind.ALL_TO_ALL_V) continue; // its counts are arrays: below
                    // The root itself is this rank, so both the root's and the others' checks are exercised below.
                    for (int peer : new int[] {kind.rooted() || kind.isPointToPoint() ? 1 : -1, 0}) {
                        Operation op = new Operation(kind, send, recv, count, type,
                                kind.reduces() ? ReduceOp.SUM : null, peer, null, kind == OpKind.ALL_REDUCE_WITH_BIAS ? bias : null);
                        refused(c, () -> c.submit(op));
                        checked++;
                    }
                }
            }
        }
        for (OpKind kind : OpKind.values()) {
            if (!kind.rooted() && !kind.isPointToPoint()) continue;
            for (int peer : BAD_RANKS) {
                Operation op = new Operation(kind, send, recv, 1, DataType.INT8, kind.reduces() ? ReduceOp.SUM : null,
                        peer, null, null);
                refused(c, () -> c.submit(op));
                checked++;
            }
        }
        for (long[][] v : extremeAllToAllvArrays()) {
            refused(c, () -> c.allToAllv(send, v[0], v[1], recv, v[2], v[3], DataType.FLOAT64));
            checked++;
        }
        assertEquals(TYPES.length * 11 * (OpKind.values().length - 1) * 2 + 6 * BAD_RANKS.length
                + extremeAllToAllvArrays().size(), checked, "every case was tried");
        stillWorks();
    }

    /** allToAllv counts and displacements whose sum, or whose sum × element size, leaves a long; negative entries. */
    private static List<long[][]> extremeAllToAllvArrays() {
        long[] ok = {1, 1, 1};
        long[] at = {0, 1, 2};
        List<long[][]> cases = new ArrayList<>();
        long[] edges = {Long.MAX_VALUE, Long.MAX_VALUE / 8 + 1, Long.MIN_VALUE, -1, Long.MAX_VALUE - 1};
        for (long e : edges) {
            cases.add(new long[][] {{1, e, 1}, at, ok, at});      // a send count
            cases.add(new long[][] {ok, {0, e, 2}, ok, at});      // a send displacement
            cases.add(new long[][] {ok, at, {1, 1, e}, at});      // a receive count
            cases.add(new long[][] {ok, at, ok, {e, 1, 2}});      // a receive displacement
        }
        cases.add(new long[][] {{1, Long.MAX_VALUE / 2, 1}, {0, Long.MAX_VALUE / 2 + 2, 2}, ok, at}); // the sum wraps
        cases.add(new long[][] {ok, at, ok, {0, 1}});             // too few entries
        return cases;
    }

    @Test
    void streamWorkAndBufferAccessRefuseExtremeSizesAndOffsets() throws Exception {
        comms.addAll(host().initAll(RANKS).get(30, TimeUnit.SECONDS));
        Communicator c = comms.get(0);
        Buffer a = buffer();
        Buffer b = buffer();
        Stream s = c.stream();
        long[] sizes = {-1, Long.MIN_VALUE, Long.MAX_VALUE, BYTES + 1};
        for (long bytes : sizes) {
            refused(c, () -> s.copy(a, b, bytes));
            refused(c, () -> s.fill(a, 0, bytes));
        }
        long[][] ranges = {{-1, 1}, {1, -1}, {Long.MAX_VALUE, 1}, {1, Long.MAX_VALUE}, {Long.MAX_VALUE, Long.MAX_VALUE},
            {BYTES, 1}, {Long.MIN_VALUE, Long.MIN_VALUE}, {BYTES - 1, Long.MAX_VALUE}};
        for (long[] r : ranges) refused(c, () -> a.slice(r[0], r[1]));
        for (long at : new long[] {-1, Long.MIN_VALUE, Long.MAX_VALUE, BYTES}) {
            refused(c, () -> a.read(at, ByteBuffer.allocate(1)));
            refused(c, () -> a.write(at, new float[] {1}));
        }
        for (int count : new int[] {-1, Integer.MIN_VALUE, Integer.MAX_VALUE / 4 + 1}) {
            refused(c, () -> a.readFloats(0, count));
            refused(c, () -> a.readLongs(0, count));
        }
        refused(c, () -> a.readFloats(Long.MAX_VALUE, 1));
        stillWorks();
    }

    private static void refused(Communicator c, Executable call) {
        assertThrows(InvalidArgumentException.class, call);
        assertEquals(0, c.pendingCount(), "nothing was admitted");
    }

    /** A real collective on every rank: the refused calls left nothing behind and desynchronised nothing. */
    private void stillWorks() throws Exception {
        List<Buffer> data = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        for (int r = 0; r < RANKS; r++) {
            Buffer b = floats(r + 1, 10 * (r + 1));
            buffers.add(b);
            data.add(b);
            works.add(comms.get(r).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
        for (Buffer b : data) assertArrayEquals(new float[] {6, 60}, read(b));
    }
}
