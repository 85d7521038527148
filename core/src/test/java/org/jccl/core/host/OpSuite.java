package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.matrix.Reference;
import org.jspecify.annotations.Nullable;

/**
 * Every operation kind, every data type and reduction, in-place forms and groups with sends and receives in both
 * orders, run on a communicator under test and on an in-JVM reference communicator (LocalClique) with the same
 * deterministic inputs; the results must be identical byte for byte. The plain all-reduces are also checked against
 * the {@link Reference}, which shares no code with the backend, so a reduction wrong in both transports still fails.
 * Used by the in-JVM network tests and by the test main that runs in several processes.
 */
final class OpSuite {
    /** Elements of the large cases: several 1 MiB frames per rank's part, not divisible by 2 or 3. */
    static final int LARGE = 3 * (1 << 20) / 4 * 3 + 123;

    private OpSuite() {
    }

    /** Buffers and operations of one case on one rank; {@code outputs} are compared. */
    record Prepared(List<Operation> ops, List<Buffer> outputs, List<AutoCloseable> owned) {
    }

    /** One case: builds a rank's operations from its communicator (rank, size) and deterministic inputs. */
    interface Case {
        Prepared prepare(Backend host, Communicator comm, int seed) throws Exception;
    }

    /**
     * What rank {@code rank} of {@code n} must hold in its first output, computed by the plain {@link Reference}
     * from every rank's inputs (seeds {@code seedBase + r}): an oracle that shares no code with the backend.
     */
    interface Oracle {
        ByteBuffer expected(int rank, int n, int seedBase);
    }

    record Named(String name, Case body, @Nullable Oracle oracle) {
        Named(String name, Case body) {
            this(name, body, null);
        }
    }

    /** The cases, in the order every rank runs them. */
    static List<Named> cases() {
        List<Named> all = new ArrayList<>();
        for (DataType t : DataType.values()) {
            for (ReduceOp op : ReduceOp.builtIn()) {
                all.add(new Named("allReduce " + t + " " + op, (h, c, s) -> allReduce(h, c, s, t, 37, op, false),
                        (rank, n, seedBase) -> reducedByReference(t, 37, Reference.Kind.valueOf(op.toString().toUpperCase(Locale.ROOT)), n, seedBase)));
            }
        }
        all.add(new Named("allReduce large float32 sum", (h, c, s) -> allReduce(h, c, s, DataType.FLOAT32, LARGE, ReduceOp.SUM, false)));
        all.add(new Named("allReduce large in place float32 sum", (h, c, s) -> allReduce(h, c, s, DataType.FLOAT32, LARGE, ReduceOp.SUM, true)));
        all.add(new Named("allReduce in place int32 max", (h, c, s) -> allReduce(h, c, s, DataType.INT32, 11, ReduceOp.MAX, true)));
        for (DataType t : List.of(DataType.FLOAT32, DataType.FLOAT16, DataType.INT32)) {
            all.add(new Named("allReduce premulsum host scalar " + t, (h, c, s) -> {
                ReduceOp op = c.createPreMulSum(1.5 + c.rank(), t).get(30, TimeUnit.SECONDS);
                Prepared p = allReduce(h, c, s, t, 29, op, false);
                return withOwned(p, (AutoCloseable) op);
            }));
        }
        for (DataType t : List.of(DataType.FLOAT64, DataType.INT64, DataType.BFLOAT16)) {
            all.add(new Named("allReduce premulsum device scalar " + t, (h, c, s) -> {
                Buffer scalar = h.allocate(0, 8);
                ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
                if (t == DataType.INT64) Reference.putLong(t, v, 0, 3L + c.rank()); else Reference.putFloat(t, v, 0, 0.75 + c.rank());
                v.position(0).limit(t.size());
                scalar.write(0, v);
                ReduceOp op = c.createPreMulSum(scalar, t).get(30, TimeUnit.SECONDS);
                Prepared p = allReduce(h, c, s, t, 23, op, false);
                return withOwned(withOwned(p, (AutoCloseable) op), scalar);
            }));
        }
        all.add(new Named("allReduceWithBias float32 sum", (h, c, s) -> withBias(h, c, s, DataType.FLOAT32, ReduceOp.SUM)));
        all.add(new Named("allReduceWithBias bfloat16 avg", (h, c, s) -> withBias(h, c, s, DataType.BFLOAT16, ReduceOp.AVG)));
        all.add(new Named("allReduceWithBias int32 max", (h, c, s) -> withBias(h, c, s, DataType.INT32, ReduceOp.MAX)));
        all.add(new Named("allReduceWithBias uint8 avg", (h, c, s) -> withBias(h, c, s, DataType.UINT8, ReduceOp.AVG)));
        all.add(new Named("reduce float64 sum root 1", (h, c, s) -> {
            Buffer in = filled(h, DataType.FLOAT64, 41, s);
            Buffer out = h.allocate(0, 41L * 8);
            return new Prepared(List.of(Operation.reduce(in, out, 41, DataType.FLOAT64, ReduceOp.SUM, 1 % c.size())),
                    c.rank() == 1 % c.size() ? List.of(out) : List.of(), List.of(in, out));
        }));
        all.add(new Named("reduce large int8 prod root 0", (h, c, s) -> {
            Buffer in = filled(h, DataType.INT8, LARGE, s);
            Buffer out = h.allocate(0, LARGE);
            return new Prepared(List.of(Operation.reduce(in, out, LARGE, DataType.INT8, ReduceOp.PROD, 0)),
                    c.rank() == 0 ? List.of(out) : List.of(), List.of(in, out));
        }));
        all.add(new Named("reduceScatter float32 sum", (h, c, s) -> {
            Buffer in = filled(h, DataType.FLOAT32, 5L * c.size(), s);
            Buffer out = h.allocate(0, 5L * 4);
            return new Prepared(List.of(Operation.reduceScatter(in, out, 5, DataType.FLOAT32, ReduceOp.SUM)), List.of(out), List.of(in, out));
        }));
        all.add(new Named("reduceScatter large in place float16 min", (h, c, s) -> {
            long per = 600_001;
            Buffer in = filled(h, DataType.FLOAT16, per * c.size(), s);
            Buffer out = in.slice(c.rank() * per * 2, per * 2);
            return new Prepared(List.of(Operation.reduceScatter(in, out, per, DataType.FLOAT16, ReduceOp.MIN)), List.of(in), List.of(in));
        }));
        all.add(new Named("broadcast large uint8 root last", (h, c, s) -> {
            Buffer in = filled(h, DataType.UINT8, LARGE, s);
            Buffer out = h.allocate(0, LARGE);
            return new Prepared(List.of(Operation.broadcast(in, out, LARGE, DataType.UINT8, c.size() - 1)), List.of(out), List.of(in, out));
        }));
        all.add(new Named("broadcast in place int64 root 0", (h, c, s) -> {
            Buffer in = filled(h, DataType.INT64, 9, s);
            return new Prepared(List.of(Operation.broadcast(in, in, 9, DataType.INT64, 0)), List.of(in), List.of(in));
        }));
        all.add(new Named("allGather int64", (h, c, s) -> {
            Buffer in = filled(h, DataType.INT64, 7, s);
            Buffer out = h.allocate(0, 7L * 8 * c.size());
            return new Prepared(List.of(Operation.allGather(in, out, 7, DataType.INT64)), List.of(out), List.of(in, out));
        }));
        all.add(new Named("allGather in place float8_e4m3", (h, c, s) -> {
            Buffer all2 = filled(h, DataType.FLOAT8_E4M3, 13L * c.size(), s);
            Buffer in = all2.slice(13L * c.rank(), 13);
            return new Prepared(List.of(Operation.allGather(in, all2, 13, DataType.FLOAT8_E4M3)), List.of(all2), List.of(all2));
        }));
        all.add(new Named("gather float16 root 0", (h, c, s) -> {
            Buffer in = filled(h, DataType.FLOAT16, 4, s);
            Buffer out = h.allocate(0, 4L * 2 * c.size());
            return new Prepared(List.of(Operation.gather(in, out, 4, DataType.FLOAT16, 0)), c.rank() == 0 ? List.of(out) : List.of(),
                    List.of(in, out));
        }));
        all.add(new Named("scatter int32 root last", (h, c, s) -> {
            Buffer in = filled(h, DataType.INT32, 6L * c.size(), s);
            Buffer out = h.allocate(0, 6L * 4);
            return new Prepared(List.of(Operation.scatter(in, out, 6, DataType.INT32, c.size() - 1)), List.of(out), List.of(in, out));
        }));
        all.add(new Named("allToAll uint32", (h, c, s) -> {
            Buffer in = filled(h, DataType.UINT32, 3L * c.size(), s);
            Buffer out = h.allocate(0, 3L * 4 * c.size());
            return new Prepared(List.of(Operation.allToAll(in, out, 3, DataType.UINT32)), List.of(out), List.of(in, out));
        }));
        all.add(new Named("allToAllv float64", OpSuite::allToAllv));
        all.add(new Named("group send then recv (ring)", (h, c, s) -> ring(h, c, s, true)));
        all.add(new Named("group recv then send (ring)", (h, c, s) -> ring(h, c, s, false)));
        all.add(new Named("group allReduce with a ring exchange", (h, c, s) -> {
            Prepared a = allReduce(h, c, s, DataType.FLOAT32, 1000, ReduceOp.SUM, false);
            Prepared b = ring(h, c, s + 7, false);
            List<Operation> ops = new ArrayList<>(b.ops());
            ops.add(1, a.ops().get(0));
            return new Prepared(ops, concat(a.outputs(), b.outputs()), concat(a.owned(), b.owned()));
        }));
        return all;
    }

    private static <T> List<T> concat(List<? extends T> a, List<? extends T> b) {
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static Prepared withOwned(Prepared p, AutoCloseable more) {
        List<AutoCloseable> owned = new ArrayList<>(p.owned());
        owned.add(0, more);
        return new Prepared(p.ops(), p.outputs(), owned);
    }

    private static Prepared allReduce(Backend h, Communicator c, int seed, DataType t, long count, ReduceOp op, boolean inPlace) {
        Buffer in = filled(h, t, count, seed);
        Buffer out = inPlace ? in : h.allocate(0, count * t.size());
        return new Prepared(List.of(Operation.allReduce(in, out, count, t, op)), List.of(out), inPlace ? List.of(in) : List.of(in, out));
    }

    private static Prepared withBias(Backend h, Communicator c, int seed, DataType t, ReduceOp op) {
        long count = 19;
        Buffer in = filled(h, t, count, seed);
        Buffer bias = filled(h, t, count, seed + 1000);
        Buffer out = h.allocate(0, count * t.size());
        return new Prepared(List.of(Operation.allReduceWithBias(in, out, count, t, op, bias)), List.of(out), List.of(in, bias, out));
    }

    private static Prepared allToAllv(Backend h, Communicator c, int seed) {
        int n = c.size();
        int r = c.rank();
        long[] sendCounts = new long[n];
        long[] sendDispl = new long[n];
        long[] recvCounts = new long[n];
        long[] recvDispl = new long[n];
        long sent = 0;
        long received = 0;
        for (int j = 0; j < n; j++) {
            // Rank 0 receives more from higher ranks, so ranks send different totals.
            sendCounts[j] = (r + 2L * j) % 3 + 1 + (j == 0 ? r : 0);
            sendDispl[j] = sent;
            sent += sendCounts[j];
            recvCounts[j] = (j + 2L * r) % 3 + 1 + (r == 0 ? j : 0);
            recvDispl[j] = received;
            received += recvCounts[j];
        }
        Buffer in = filled(h, DataType.FLOAT64, sent, seed);
        Buffer out = h.allocate(0, received * 8);
        return new Prepared(List.of(Operation.allToAllv(in, sendCounts, sendDispl, out, recvCounts, recvDispl, DataType.FLOAT64)),
                List.of(out), List.of(in, out));
    }

    private static Prepared ring(Backend h, Communicator c, int seed, boolean sendFirst) {
        int n = c.size();
        long count = 1 << 19;
        Buffer in = filled(h, DataType.INT32, count, seed);
        Buffer out = h.allocate(0, count * 4);
        Operation send = Operation.send(in, count, DataType.INT32, (c.rank() + 1) % n);
        Operation recv = Operation.recv(out, count, DataType.INT32, (c.rank() - 1 + n) % n);
        return new Prepared(sendFirst ? List.of(send, recv) : List.of(recv, send), List.of(out), List.of(in, out));
    }

    /** A buffer of {@code count} elements of reproducible values for {@code seed}. */
    static Buffer filled(Backend h, DataType t, long count, int seed) {
        Buffer buffer = h.allocate(0, Math.max(1, count * t.size()));
        buffer.write(0, values(t, count, seed));
        return buffer;
    }

    /** The values {@link #filled} writes for {@code seed}. */
    private static ByteBuffer values(DataType t, long count, int seed) {
        Random random = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate((int) (count * t.size())).order(ByteOrder.nativeOrder());
        boolean floating = t.name().startsWith("FLOAT") || t == DataType.BFLOAT16;
        for (int i = 0; i < count; i++) {
            if (floating) Reference.putFloat(t, b, i, (random.nextDouble() - 0.5) * 6);
            else Reference.putLong(t, b, i, random.nextLong());
        }
        return b;
    }

    /** Every rank's inputs reduced element by element by the plain reference. */
    private static ByteBuffer reducedByReference(DataType t, int count, Reference.Kind kind, int n, int seedBase) {
        ByteBuffer[] inputs = new ByteBuffer[n];
        for (int r = 0; r < n; r++) inputs[r] = values(t, count, seedBase + r);
        ByteBuffer out = ByteBuffer.allocate(count * t.size()).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++) Reference.reduce(t, kind, new double[n], inputs, i, out, i);
        return out;
    }

    static byte[] bytes(Buffer b) {
        ByteBuffer out = ByteBuffer.allocate((int) b.byteSize());
        b.read(0, out);
        return out.array();
    }

    /** Runs one prepared case on a communicator: the whole list as one group when it has several operations. */
    static CompletableFuture<Void> submit(Communicator c, Prepared p) {
        return p.ops().size() == 1 ? c.submit(p.ops().get(0)) : c.submitGroup(p.ops());
    }

    /**
     * Runs every case on {@code comm} (rank r of n) and on the reference ranks (all n, in this JVM), and fails
     * on the first output that differs. Returns the number of cases checked.
     */
    static int check(Backend h, Communicator comm, List<Communicator> reference) throws Exception {
        int checked = 0;
        List<Named> cases = cases();
        for (int i = 0; i < cases.size(); i++) {
            Named named = cases.get(i);
            int seedBase = 1000 * i;
            List<Prepared> refs = new ArrayList<>();
            for (Communicator rc : reference) refs.add(named.body().prepare(h, rc, seedBase + rc.rank()));
            Prepared mine = named.body().prepare(h, comm, seedBase + comm.rank());
            try {
                List<CompletableFuture<Void>> works = new ArrayList<>();
                for (int j = 0; j < reference.size(); j++) works.add(submit(reference.get(j), refs.get(j)));
                CompletableFuture.allOf(works.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                submit(comm, mine).get(60, TimeUnit.SECONDS);
                List<Buffer> expected = refs.get(comm.rank()).outputs();
                for (int k = 0; k < expected.size(); k++) {
                    if (!Arrays.equals(bytes(expected.get(k)), bytes(mine.outputs().get(k)))) {
                        throw new AssertionError(named.name() + ": rank " + comm.rank() + " output " + k + " differs from the in-JVM result");
                    }
                }
                if (named.oracle() != null) {
                    byte[] oracle = named.oracle().expected(comm.rank(), comm.size(), seedBase).array();
                    if (!Arrays.equals(oracle, bytes(mine.outputs().get(0)))) {
                        throw new AssertionError(named.name() + ": rank " + comm.rank() + " differs from the plain reference");
                    }
                }
                checked++;
            } finally {
                for (Prepared p : refs) close(p);
                close(mine);
            }
        }
        return checked;
    }

    private static void close(Prepared p) throws Exception {
        for (AutoCloseable a : p.owned()) a.close();
    }
}
