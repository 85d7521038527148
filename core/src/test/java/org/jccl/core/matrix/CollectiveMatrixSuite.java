package org.jccl.core.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.Operation;
import org.jccl.core.PreMulSum;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * The collective matrix, written once for every backend: each operation × data type × reduction (the five
 * built-ins, PreMulSum with a host scalar and with a device scalar) × in-place and out-of-place, for each rank
 * count a subclass names, checked against {@link Reference}. Subclasses say how to open communicators, which
 * operations the library has, and how close floating results must be (zero: bit-identical).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CollectiveMatrixSuite {
    /** Elements per rank: odd, so reductions split unevenly over the ranks. */
    protected static final int COUNT = 101;
    private static final byte SENTINEL = 0x5A;
    private final Map<Integer, List<Communicator>> open = new LinkedHashMap<>();

    /** The rank counts to run. */
    protected abstract int[] rankCounts();

    /** {@code n} communicators of one clique, rank i at index i. */
    protected abstract List<Communicator> openCommunicators(int n) throws Exception;

    /** The allowed relative difference of floating results of {@code type}; 0 demands identical bits. */
    protected abstract double tolerance(DataType type);

    /** Whether the backend has {@code kind} (e.g. RCCL-only operations on NCCL). */
    protected boolean supports(OpKind kind) {
        return true;
    }

    /**
     * The rank whose contribution the reference folds first into {@code outputRank}'s block of a reduce-scatter (then
     * the next ranks in turn): rank 0 here, as the host backend adds; a ring starts after the output rank.
     */
    protected int reduceScatterFirstRank(int n, int outputRank, DataType type) {
        return 0;
    }

    /** Whether the backend's library runs reduction {@code kind} on {@code type} with {@code n} ranks. */
    protected boolean libraryAccepts(int n, DataType type, Reference.Kind kind) {
        return true;
    }

    private record Variant(Reference.Kind kind, boolean premul, boolean deviceScalar) {
        @Override
        public String toString() {
            return premul ? (deviceScalar ? "premulsum(device)" : "premulsum(host)") : kind.name().toLowerCase();
        }
    }

    private static final List<Variant> REDUCTIONS = List.of(new Variant(Reference.Kind.SUM, false, false),
            new Variant(Reference.Kind.PROD, false, false), new Variant(Reference.Kind.MAX, false, false),
            new Variant(Reference.Kind.MIN, false, false), new Variant(Reference.Kind.AVG, false, false),
            new Variant(Reference.Kind.PREMUL_SUM, true, false), new Variant(Reference.Kind.PREMUL_SUM, true, true));

    @TestFactory
    Stream<DynamicNode> matrix() {
        List<DynamicNode> byRanks = new ArrayList<>();
        for (int n : rankCounts()) {
            List<DynamicNode> byKind = new ArrayList<>();
            for (OpKind kind : OpKind.values()) {
                if (kind == OpKind.SEND || !supports(kind)) continue;
                List<DynamicNode> byType = new ArrayList<>();
                for (DataType type : DataType.values()) {
                    byType.add(DynamicTest.dynamicTest(type.toString(), () -> runAll(n, kind, type)));
                }
                byKind.add(DynamicContainer.dynamicContainer(kind == OpKind.RECV ? "send/recv" : kind.method(), byType));
            }
            byRanks.add(DynamicContainer.dynamicContainer(n + " ranks", byKind));
        }
        return byRanks.stream();
    }

    @AfterAll
    void closeCommunicators() {
        for (List<Communicator> comms : open.values()) for (Communicator c : comms) c.close();
        open.clear();
    }

    private List<Communicator> comms(int n) throws Exception {
        List<Communicator> c = open.get(n);
        if (c == null) {
            c = openCommunicators(n);
            open.put(n, c);
        }
        return c;
    }

    private void runAll(int n, OpKind kind, DataType type) throws Exception {
        for (Case c : cases(new ArrayList<>(comms(n)), kind, type)) c.run();
    }

    /**
     * Runs every case of the matrix for the ranks of {@code comms} that live in this process (the others are
     * {@code null}: other processes run their share of each case at the same time, in the same order) and returns
     * what was wrong, one line per failed case; empty when every value was right.
     */
    public List<String> runEveryCase(List<@Nullable Communicator> comms) throws Exception {
        List<String> wrong = new ArrayList<>();
        for (OpKind kind : OpKind.values()) {
            if (kind == OpKind.SEND || !supports(kind)) continue;
            for (DataType type : DataType.values()) {
                for (Case c : cases(comms, kind, type)) {
                    try {
                        c.run();
                    } catch (AssertionError e) {
                        wrong.add(e.getMessage());
                    }
                }
            }
        }
        return wrong;
    }

    /** The number of cases {@link #runEveryCase} runs on {@code n} ranks. */
    public int caseCount(int n) {
        List<@Nullable Communicator> nobody = new ArrayList<>();
        for (int r = 0; r < n; r++) nobody.add(null);
        int count = 0;
        for (OpKind kind : OpKind.values()) {
            if (kind == OpKind.SEND || !supports(kind)) continue;
            for (DataType type : DataType.values()) count += cases(nobody, kind, type).size();
        }
        return count;
    }

    private List<Case> cases(List<@Nullable Communicator> comms, OpKind kind, DataType type) {
        int n = comms.size();
        List<@Nullable Variant> variants = new ArrayList<>();
        if (kind.reduces()) variants.addAll(REDUCTIONS);
        else variants.add(null);
        boolean[] placements = switch (kind) {
            case ALL_TO_ALL, ALL_TO_ALL_V, RECV, SEND -> new boolean[] {false};
            default -> new boolean[] {false, true};
        };
        List<Case> cases = new ArrayList<>();
        for (Variant v : variants) {
            if (v != null && !libraryAccepts(n, type, v.kind())) continue; // rejected up front: tested by the subclass
            for (boolean inPlace : placements) cases.add(new Case(comms, kind, type, v, inPlace));
        }
        return cases;
    }

    /**
     * One operation on every rank, its inputs, and the expected contents of every rank's output buffer. Every process
     * computes every rank's inputs and expectations (they are seeded by rank), but issues and checks only the ranks
     * whose communicator it holds.
     */
    private final class Case {
        private final List<@Nullable Communicator> comms;
        private final int n;
        private final OpKind kind;
        private final DataType type;
        private final @Nullable Variant variant;
        private final boolean inPlace;
        private final int root;
        private final int size;
        private final List<AutoCloseable> resources = new ArrayList<>();

        Case(List<@Nullable Communicator> comms, OpKind kind, DataType type, @Nullable Variant variant, boolean inPlace) {
            this.comms = comms;
            this.n = comms.size();
            this.kind = kind;
            this.type = type;
            this.variant = variant;
            this.inPlace = inPlace;
            this.root = n - 1;
            this.size = type.size();
        }

        @Override
        public String toString() {
            return kind.method() + " " + type + (variant == null ? "" : " " + variant) + (inPlace ? " in-place" : "")
                    + " on " + n + " ranks";
        }

        void run() throws Exception {
            try {
                execute();
            } finally {
                for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
            }
        }

        private boolean here(int rank) {
            return comms.get(rank) != null;
        }

        private double scalar(int rank) {
            return type.isFloatingPoint() ? 0.5 * (rank % 4 + 1) : rank % 3 + 1;
        }

        private ByteBuffer input(int rank, int tag, long elements) {
            Random random = new Random(31L * kind.ordinal() + 7L * type.ordinal() + 1000L * rank + 17L * tag + n);
            ByteBuffer b = Reference.allocate(type, elements);
            for (int i = 0; i < elements; i++) {
                if (type.isFloatingPoint()) Reference.putFloat(type, b, i, (random.nextInt(17) - 8) * 0.25);
                else Reference.putLong(type, b, i, random.nextLong());
            }
            return b;
        }

        private ByteBuffer sentinel(long elements) {
            ByteBuffer b = Reference.allocate(type, elements);
            Arrays.fill(b.array(), SENTINEL);
            return b;
        }

        private Buffer device(Communicator c, ByteBuffer contents) {
            Buffer b = c.backend().allocate(Math.max(c.device(), 0), Math.max(contents.capacity(), 1));
            resources.add(b);
            b.write(0, contents.duplicate().clear());
            return b;
        }

        private void execute() throws Exception {
            long sendElems = switch (kind) {
                case REDUCE_SCATTER, SCATTER, ALL_TO_ALL -> (long) COUNT * n;
                default -> COUNT;
            };
            long recvElems = switch (kind) {
                case ALL_GATHER, GATHER, ALL_TO_ALL -> (long) COUNT * n;
                default -> COUNT;
            };
            long[][][] v = kind == OpKind.ALL_TO_ALL_V ? allToAllvCounts() : null;
            ByteBuffer[] sends = new ByteBuffer[n];
            for (int r = 0; r < n; r++) sends[r] = input(r, 0, v != null ? extent(v[r][0], v[r][1]) : sendElems);
            ByteBuffer[] biases = new ByteBuffer[n];
            if (kind == OpKind.ALL_REDUCE_WITH_BIAS) for (int r = 0; r < n; r++) biases[r] = input(r, 1, COUNT);

            ByteBuffer[] expected = new ByteBuffer[n];
            Buffer[] readBack = new Buffer[n];
            List<@Nullable Operation> ops = new ArrayList<>();
            List<@Nullable ReduceOp> reduceOps = reduceOps();
            for (int r = 0; r < n; r++) {
                Communicator c = comms.get(r);
                if (c == null) { // another process's rank: nothing issued, expected or read here
                    ops.add(null);
                    if (kind == OpKind.RECV) ops.add(null);
                    continue;
                }
                Buffer send;
                Buffer recv;
                ByteBuffer initial;
                boolean rootHere = r == root;
                long recvCapacity = v != null ? extent(v[r][2], v[r][3]) : recvElems;
                if (!inPlace) {
                    send = device(c, sends[r]);
                    initial = sentinel(recvCapacity);
                    recv = device(c, initial);
                } else {
                    switch (kind) {
                        case ALL_GATHER, GATHER -> {
                            if (kind == OpKind.GATHER && !rootHere) {
                                send = device(c, sends[r]);
                                initial = sentinel(recvElems);
                                recv = device(c, initial);
                            } else {
                                initial = sentinel(recvElems);
                                initial.put(r * COUNT * size, sends[r], 0, COUNT * size);
                                recv = device(c, initial);
                                send = recv.slice((long) r * COUNT * size, (long) COUNT * size);
                            }
                        }
                        case REDUCE_SCATTER -> {
                            initial = sends[r];
                            send = device(c, initial);
                            recv = send.slice((long) r * COUNT * size, (long) COUNT * size);
                            readBack[r] = send;
                        }
                        case SCATTER -> {
                            if (!rootHere) {
                                send = device(c, sends[r]);
                                initial = sentinel(recvElems);
                                recv = device(c, initial);
                            } else {
                                initial = sends[r];
                                send = device(c, initial);
                                recv = send.slice((long) r * COUNT * size, (long) COUNT * size);
                                readBack[r] = send;
                            }
                        }
                        default -> {
                            initial = sends[r];
                            send = device(c, initial);
                            recv = send;
                        }
                    }
                }
                if (readBack[r] == null) readBack[r] = recv.offset() == 0 || !inPlace ? recv : send;
                if (inPlace && (kind == OpKind.ALL_GATHER || (kind == OpKind.GATHER && rootHere))) readBack[r] = recv;
                expected[r] = Reference.allocate(type, readBack[r].byteSize() / size);
                expected[r].put(0, initial, 0, expected[r].capacity());
                ReduceOp op = reduceOps == null ? null : reduceOps.get(r);
                ops.add(switch (kind) {
                    case ALL_REDUCE -> Operation.allReduce(send, recv, COUNT, type, op);
                    case ALL_REDUCE_WITH_BIAS -> Operation.allReduceWithBias(send, recv, COUNT, type, op, device(c, biases[r]));
                    case REDUCE -> Operation.reduce(send, recv, COUNT, type, op, root);
                    case REDUCE_SCATTER -> Operation.reduceScatter(send, recv, COUNT, type, op);
                    case BROADCAST -> Operation.broadcast(send, recv, COUNT, type, root);
                    case ALL_GATHER -> Operation.allGather(send, recv, COUNT, type);
                    case GATHER -> Operation.gather(send, recv, COUNT, type, root);
                    case SCATTER -> Operation.scatter(send, recv, COUNT, type, root);
                    case ALL_TO_ALL -> Operation.allToAll(send, recv, COUNT, type);
                    case ALL_TO_ALL_V -> Operation.allToAllv(send, v[r][0], v[r][1], recv, v[r][2], v[r][3], type);
                    case SEND, RECV -> Operation.recv(recv, COUNT, type, (r - 1 + n) % n);
                });
                if (kind == OpKind.RECV) ops.add(Operation.send(send, COUNT, type, (r + 1) % n));
            }
            computeExpected(sends, biases, expected, v);

            List<Work> works = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                if (!here(r)) continue;
                if (kind == OpKind.RECV) {
                    // Receive listed first: a group must not deadlock whatever the order.
                    works.add(comms.get(r).submitGroup(List.of(ops.get(2 * r), ops.get(2 * r + 1))));
                } else {
                    works.add(comms.get(r).submit(ops.get(r)));
                }
            }
            CompletableFuture.allOf(works.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
            for (int r = 0; r < n; r++) {
                if (!here(r)) continue;
                ByteBuffer actual = Reference.allocate(type, readBack[r].byteSize() / size);
                readBack[r].read(0, actual.duplicate());
                compare(r, expected[r], actual);
            }
        }

        private @Nullable List<@Nullable ReduceOp> reduceOps() throws Exception {
            if (variant == null) return null;
            List<@Nullable ReduceOp> out = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Communicator c = comms.get(r);
                if (c == null) {
                    out.add(null);
                    continue;
                }
                if (!variant.premul()) {
                    out.add(switch (variant.kind()) {
                        case SUM -> ReduceOp.SUM;
                        case PROD -> ReduceOp.PROD;
                        case MAX -> ReduceOp.MAX;
                        case MIN -> ReduceOp.MIN;
                        default -> ReduceOp.AVG;
                    });
                    continue;
                }
                PreMulSum p;
                if (variant.deviceScalar()) {
                    ByteBuffer s = Reference.allocate(type, 1);
                    if (type.isFloatingPoint()) Reference.putFloat(type, s, 0, scalar(r));
                    else Reference.putLong(type, s, 0, (long) scalar(r));
                    p = c.createPreMulSum(device(c, s), type).get(30, TimeUnit.SECONDS);
                } else {
                    p = c.createPreMulSum(scalar(r), type).get(30, TimeUnit.SECONDS);
                }
                resources.add(p);
                out.add(p);
            }
            return out;
        }

        private void computeExpected(ByteBuffer[] sends, ByteBuffer[] biases, ByteBuffer[] expected, long[][][] v) {
            double[] scalars = new double[n];
            for (int r = 0; r < n; r++) scalars[r] = scalar(r);
            Reference.Kind rk = variant == null ? null : variant.kind();
            switch (kind) {
                case ALL_REDUCE, ALL_REDUCE_WITH_BIAS, REDUCE -> {
                    ByteBuffer reduced = Reference.allocate(type, COUNT);
                    for (int i = 0; i < COUNT; i++) Reference.reduce(type, rk, scalars, sends, i, reduced, i);
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        if (kind == OpKind.REDUCE && r != root) continue;
                        if (kind == OpKind.ALL_REDUCE_WITH_BIAS) {
                            for (int i = 0; i < COUNT; i++) Reference.applyBias(type, rk, reduced, biases[r], i, expected[r]);
                        } else {
                            expected[r].put(0, reduced, 0, COUNT * size);
                        }
                    }
                }
                case REDUCE_SCATTER -> {
                    ByteBuffer block = Reference.allocate(type, COUNT);
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        int first = reduceScatterFirstRank(n, r, type);
                        for (int i = 0; i < COUNT; i++) Reference.reduce(type, rk, scalars, sends, r * COUNT + i, block, i, first);
                        expected[r].put(inPlace ? r * COUNT * size : 0, block, 0, COUNT * size);
                    }
                }
                case BROADCAST -> {
                    for (int r = 0; r < n; r++) if (here(r)) expected[r].put(0, sends[root], 0, COUNT * size);
                }
                case ALL_GATHER, GATHER -> {
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        if (kind == OpKind.GATHER && r != root) continue;
                        for (int j = 0; j < n; j++) expected[r].put(j * COUNT * size, sends[j], 0, COUNT * size);
                    }
                }
                case SCATTER -> {
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        expected[r].put(inPlace && r == root ? r * COUNT * size : 0, sends[root], r * COUNT * size, COUNT * size);
                    }
                }
                case ALL_TO_ALL -> {
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        for (int j = 0; j < n; j++) expected[r].put(j * COUNT * size, sends[j], r * COUNT * size, COUNT * size);
                    }
                }
                case ALL_TO_ALL_V -> {
                    for (int r = 0; r < n; r++) {
                        if (!here(r)) continue;
                        for (int j = 0; j < n; j++) {
                            int elements = (int) v[j][0][r];
                            expected[r].put((int) v[r][3][j] * size, sends[j], (int) v[j][1][r] * size, elements * size);
                        }
                    }
                }
                case SEND, RECV -> {
                    for (int r = 0; r < n; r++) if (here(r)) expected[r].put(0, sends[(r - 1 + n) % n], 0, COUNT * size);
                }
            }
        }

        /** Per rank: send counts, send displacements, receive counts, receive displacements; gaps between blocks. */
        private long[][][] allToAllvCounts() {
            long[][][] v = new long[n][4][n];
            for (int r = 0; r < n; r++) {
                long sendAt = 0;
                long recvAt = 1;
                for (int j = 0; j < n; j++) {
                    v[r][0][j] = (r * 3L + j * 5L) % 7 + 1;
                    v[r][1][j] = sendAt;
                    sendAt += v[r][0][j] + 1;
                    v[r][2][j] = (j * 3L + r * 5L) % 7 + 1;
                    v[r][3][j] = recvAt;
                    recvAt += v[r][2][j] + 2;
                }
            }
            return v;
        }

        private long extent(long[] counts, long[] displacements) {
            long max = 0;
            for (int i = 0; i < counts.length; i++) max = Math.max(max, counts[i] + displacements[i]);
            return max + 1;
        }

        private void compare(int rank, ByteBuffer expected, ByteBuffer actual) {
            double tolerance = tolerance(type);
            int elements = expected.capacity() / size;
            for (int i = 0; i < elements; i++) {
                boolean same = true;
                for (int b = 0; b < size; b++) same &= expected.get(i * size + b) == actual.get(i * size + b);
                if (same) continue;
                if (type.isFloatingPoint()) {
                    double e = Reference.floatAt(type, expected, i);
                    double a = Reference.floatAt(type, actual, i);
                    if (Double.isNaN(e) && Double.isNaN(a)) continue;
                    if (tolerance > 0 && Math.abs(e - a) <= tolerance * Math.max(1.0, Math.abs(e))) continue;
                    fail(this + ": rank " + rank + " element " + i + ": expected " + e + ", got " + a);
                } else {
                    assertEquals(Reference.longAt(type, expected, i), Reference.longAt(type, actual, i),
                            this + ": rank " + rank + " element " + i);
                }
            }
        }
    }
}
