package org.jccl.core.ranks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntBinaryOperator;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.spi.Feature;

/**
 * What four ranks expose and two hide, checked from one rank: every rank as root, all-to-all, an uneven exchange
 * between every pair, splits into uneven colour groups, and shrinks that exclude one rank and two. Every rank of a
 * communicator runs {@link #run} at the same time, in one process (a thread per rank) or one process per GPU; the
 * values depend on the sender, the receiver, the root and the element, so a block from the wrong rank or place shows.
 */
public final class EveryRankChecks {
    /** Elements per block: an odd size, a multiple of no vector width or chunk, and small enough to check every one. */
    static final int COUNT = 4099;
    private static final long WAIT_SECONDS = 120;

    private final Backend backend;
    private final Communicator comm;
    private final int rank;
    private final int n;
    private final List<String> wrong = new ArrayList<>();
    private int checked;

    private EveryRankChecks(Backend backend, Communicator comm) {
        this.backend = backend;
        this.comm = comm;
        this.rank = comm.rank();
        this.n = comm.size();
    }

    /**
     * Runs every check on this rank; {@code shrink} says whether the communicator can shrink (NCCL with
     * {@code ncclCommShrink}, or host ranks of one JVM). Returns what was wrong, empty when every value was right,
     * and never more than the first few mismatches of a section.
     */
    public static Result run(Backend backend, Communicator comm, boolean shrink) throws Exception {
        EveryRankChecks checks = new EveryRankChecks(backend, comm);
        checks.everyRoot();
        checks.allToAll();
        checks.unevenExchangeBetweenEveryPair();
        checks.unevenSplits();
        if (shrink) checks.shrinks();
        return new Result(checks.checked, List.copyOf(checks.wrong));
    }

    /** How many values were compared, and the mismatches. */
    public record Result(int checked, List<String> wrong) {
        /** One line for a log: the rank, the count, and the first mismatches. */
        public String summary(int rank) {
            return "rank " + rank + ": " + checked + " values checked, " + (wrong.isEmpty() ? "all right" : wrong.size() + " wrong: " + wrong);
        }
    }

    /** The value rank {@code from} puts at element {@code i} of what it sends towards {@code to} (or a root). */
    static int value(int from, int to, int i) {
        return from * 10_000_000 + to * 100_000 + i;
    }

    private void everyRoot() throws Exception {
        try (Buffer send = ints(COUNT * n, i -> value(rank, i / COUNT, i % COUNT));
             Buffer recv = backend.allocate(comm.device(), 4L * COUNT * n)) {
            for (int root = 0; root < n; root++) {
                int r = root;
                await(comm.broadcast(send, recv, COUNT, DataType.INT32, root));
                expect("broadcast root " + root, recv, COUNT, i -> value(r, 0, i));

                await(comm.reduce(send, recv, COUNT, DataType.INT32, ReduceOp.SUM, root));
                if (rank == root) expect("reduce root " + root, recv, COUNT, i -> sumOverRanks(p -> value(p, 0, i)));

                if (backend.features().has(Feature.GATHER)) {
                    await(comm.gather(send, recv, COUNT, DataType.INT32, root));
                    if (rank == root) expect("gather root " + root, recv, COUNT * n, i -> value(i / COUNT, 0, i % COUNT));
                }
                if (backend.features().has(Feature.SCATTER)) {
                    await(comm.scatter(send, recv, COUNT, DataType.INT32, root));
                    expect("scatter root " + root, recv, COUNT, i -> value(r, rank, i));
                }
            }
        }
    }

    private void allToAll() throws Exception {
        if (!backend.features().has(Feature.ALL_TO_ALL)) return;
        try (Buffer send = ints(COUNT * n, i -> value(rank, i / COUNT, i % COUNT));
             Buffer recv = backend.allocate(comm.device(), 4L * COUNT * n)) {
            await(comm.allToAll(send, recv, COUNT, DataType.INT32));
            expect("allToAll", recv, COUNT * n, i -> value(i / COUNT, rank, i % COUNT));
        }
    }

    /**
     * Every rank sends every other a different number of elements ({@code from + to + 1} blocks of 7) in one group of
     * sends and receives, and through allToAllv where the library has it (RCCL, the host backend).
     */
    private void unevenExchangeBetweenEveryPair() throws Exception {
        IntBinaryOperator count = (from, to) -> 7 * (from + to + 1);
        long[] sendCounts = new long[n];
        long[] sendAt = new long[n];
        long[] recvCounts = new long[n];
        long[] recvAt = new long[n];
        for (int p = 0, s = 0, r = 0; p < n; p++) {
            sendCounts[p] = count.applyAsInt(rank, p);
            recvCounts[p] = count.applyAsInt(p, rank);
            sendAt[p] = s;
            recvAt[p] = r;
            s += (int) sendCounts[p];
            r += (int) recvCounts[p];
        }
        int sendTotal = (int) (sendAt[n - 1] + sendCounts[n - 1]);
        int recvTotal = (int) (recvAt[n - 1] + recvCounts[n - 1]);
        int[] peerOfSent = new int[sendTotal];
        for (int p = 0; p < n; p++) Arrays.fill(peerOfSent, (int) sendAt[p], (int) (sendAt[p] + sendCounts[p]), p);
        try (Buffer send = ints(sendTotal, i -> value(rank, peerOfSent[i], i - (int) sendAt[peerOfSent[i]]));
             Buffer recv = backend.allocate(comm.device(), 4L * recvTotal)) {
            List<Operation> group = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                if (p == rank) continue;
                group.add(Operation.send(send.slice(4 * sendAt[p], 4 * sendCounts[p]), sendCounts[p], DataType.INT32, p));
                group.add(Operation.recv(recv.slice(4 * recvAt[p], 4 * recvCounts[p]), recvCounts[p], DataType.INT32, p));
            }
            await(comm.submitGroup(group));
            for (int p = 0; p < n; p++) {
                if (p == rank) continue;
                int from = p;
                expect("send/recv from " + p, recv.slice(4 * recvAt[p], 4 * recvCounts[p]), (int) recvCounts[p], i -> value(from, rank, i));
            }
            if (backend.features().has(Feature.ALL_TO_ALL_V)) {
                await(comm.allToAllv(send, sendCounts, sendAt, recv, recvCounts, recvAt, DataType.INT32));
                for (int p = 0; p < n; p++) {
                    int from = p;
                    expect("allToAllv from " + p, recv.slice(4 * recvAt[p], 4 * recvCounts[p]), (int) recvCounts[p], i -> value(from, rank, i));
                }
            }
        }
    }

    /**
     * Two splits: rank 0 alone and the others together with their order reversed by the key; then the last rank left
     * out and the rest split by parity (on four ranks: {0, 2} and {1}).
     */
    private void unevenSplits() throws Exception {
        int color = rank == 0 ? 0 : 1;
        try (Communicator child = comm.split(color, n - rank).get(WAIT_SECONDS, TimeUnit.SECONDS)) {
            int size = color == 0 ? 1 : n - 1;
            int childRank = color == 0 ? 0 : n - 1 - rank;
            compare("split {0} / {1.." + (n - 1) + "} size", size, child.size());
            compare("split {0} / {1.." + (n - 1) + "} rank, keys reversed", childRank, child.rank());
            allReduceOfParentRanks("split {0} / rest", child, p -> (p == 0) == (rank == 0));
        }
        if (rank == n - 1) {
            comm.splitExcluded().get(WAIT_SECONDS, TimeUnit.SECONDS);
            return;
        }
        try (Communicator child = comm.split(rank % 2, rank).get(WAIT_SECONDS, TimeUnit.SECONDS)) {
            compare("split by parity without rank " + (n - 1) + ", rank", rank / 2, child.rank());
            allReduceOfParentRanks("split by parity", child, p -> p != n - 1 && p % 2 == rank % 2);
        }
    }

    /** Shrinks excluding the last rank, then (from three ranks) excluding rank 1 and the last. */
    private void shrinks() throws Exception {
        shrinkExcluding(new int[] {n - 1});
        if (n >= 3) shrinkExcluding(new int[] {1, n - 1});
    }

    private void shrinkExcluding(int[] excluded) throws Exception {
        String what = "shrink excluding " + Arrays.toString(excluded);
        if (Arrays.stream(excluded).anyMatch(r -> r == rank)) return; // excluded ranks take no part
        try (Communicator child = comm.shrink(excluded, CommConfig.DEFAULT, comm.options())
                .get(WAIT_SECONDS, TimeUnit.SECONDS)) {
            int below = (int) Arrays.stream(excluded).filter(r -> r < rank).count();
            compare(what + ": size", n - excluded.length, child.size());
            compare(what + ": rank", rank - below, child.rank());
            allReduceOfParentRanks(what, child, p -> Arrays.stream(excluded).noneMatch(r -> r == p));
        }
    }

    /** All-reduces {@code parent rank + 1} on {@code child} and compares with the sum over the ranks it should hold. */
    private void allReduceOfParentRanks(String what, Communicator child, IntPredicate member) throws Exception {
        int expected = 0;
        for (int p = 0; p < n; p++) if (member.test(p)) expected += p + 1;
        try (Buffer b = ints(COUNT, i -> rank + 1)) {
            await(child.allReduce(b, b, COUNT, DataType.INT32, ReduceOp.SUM));
            int sum = expected;
            expect(what + ": allReduce of parent ranks + 1", b, COUNT, i -> sum);
        }
    }

    private int sumOverRanks(IntUnaryOperator f) {
        int sum = 0;
        for (int p = 0; p < n; p++) sum += f.applyAsInt(p);
        return sum;
    }

    private Buffer ints(int count, IntUnaryOperator valueAt) {
        int[] values = new int[count];
        for (int i = 0; i < count; i++) values[i] = valueAt.applyAsInt(i);
        Buffer b = backend.allocate(comm.device(), 4L * count);
        b.write(0, values);
        return b;
    }

    private void expect(String what, Buffer b, int count, IntUnaryOperator want) {
        int[] got = b.readInts(0, count);
        int mismatches = 0;
        for (int i = 0; i < count; i++) {
            checked++;
            if (got[i] != want.applyAsInt(i) && mismatches++ < 3) {
                wrong.add(what + " element " + i + ": expected " + want.applyAsInt(i) + ", got " + got[i]);
            }
        }
    }

    private void compare(String what, int want, int got) {
        checked++;
        if (want != got) wrong.add(what + ": expected " + want + ", got " + got);
    }

    private static void await(Work work) throws Exception {
        work.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
}
