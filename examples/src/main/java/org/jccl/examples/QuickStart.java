package org.jccl.examples;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;

/**
 * The quick-start main job: one communicator per GPU of this machine (or four host ranks where there is no GPU),
 * real collectives on real data, every result checked against what it must be, and a short report.
 *
 * <p>Run it with {@code mvn -B -q -DskipTests -Pquickstart verify}; {@code -Dquickstart.ranks=N} changes the host
 * rank count, {@code -Djccl.backend=host} forces the host backend.
 */
public final class QuickStart {
    private static final int COUNT = 1 << 20; // elements per rank: 4 MiB of float32
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private QuickStart() {
    }

    public static void main(String[] args) throws Exception {
        Backend backend = Jccl.backend();
        int ranks = backend.kind() == BackendKind.HOST ? Integer.getInteger("quickstart.ranks", 4) : backend.deviceCount();
        System.exit(run(backend, ranks, System.out) == 0 ? 0 : 1);
    }

    /** Runs every check on {@code ranks} ranks of {@code backend}; returns the number of failed checks. */
    public static int run(Backend backend, int ranks, PrintStream out) throws Exception {
        out.printf("jccl quick start: backend %s, %d rank(s)%n  %s%n", backend.kind().id(), ranks, backend.describe());
        out.printf("  each operation moves %d float32 elements (%d MiB) per rank, then every element is checked;%n"
                + "  times are one call on all ranks, issue to completion, first-use set-up included: a smoke test,%n"
                + "  not a measurement (org.jccl.examples.bench.Bench measures)%n", COUNT, COUNT * 4L >> 20);
        List<Communicator> comms = backend.initAll(ranks).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        int failures = 0;
        try {
            failures += check("allReduce(sum)", comms, QuickStart::allReduce, out);
            failures += check("broadcast(root=last)", comms, QuickStart::broadcast, out);
            failures += check("allGather", comms, QuickStart::allGather, out);
            failures += check("reduceScatter(max)", comms, QuickStart::reduceScatter, out);
            failures += check("allToAll", comms, QuickStart::allToAll, out);
            failures += check("send/recv ring (group)", comms, QuickStart::ring, out);
        } finally {
            for (Communicator c : comms) c.close();
        }
        out.println(failures == 0 ? "all results correct" : failures + " check(s) FAILED");
        return failures;
    }

    /** One check: issues on every rank, waits for all, verifies; returns the number of wrong ranks. */
    private interface Check {
        /** Issues the operation on every rank and returns a verifier to run once all completed. */
        Verifier issue(List<Communicator> comms, List<Buffer[]> buffers) throws Exception;
    }

    private interface Verifier {
        int wrongRanks();
    }

    private static int check(String name, List<Communicator> comms, Check check, PrintStream out) throws Exception {
        int n = comms.size();
        List<Buffer[]> buffers = new ArrayList<>();
        for (Communicator c : comms) {
            Backend b = c.backend();
            buffers.add(new Buffer[] {b.allocate(c.device(), (long) COUNT * n * 4), b.allocate(c.device(), (long) COUNT * n * 4)});
        }
        try {
            long start = System.nanoTime();
            Verifier verifier = check.issue(comms, buffers);
            double ms = (System.nanoTime() - start) / 1e6;
            int wrong = verifier.wrongRanks();
            out.printf("  %-24s %8.2f ms  %s%n", name, ms, wrong == 0 ? "ok" : wrong + " rank(s) WRONG");
            return wrong == 0 ? 0 : 1;
        } finally {
            for (Buffer[] pair : buffers) for (Buffer b : pair) b.close();
        }
    }

    private static Verifier allReduce(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        for (int rank = 0; rank < n; rank++) fillRank(buf, rank, COUNT, (r, i) -> r + 1 + (i % 7));
        waitAll(each(comms, (c, r) -> c.allReduce(buf.get(r)[0], buf.get(r)[1], COUNT, DataType.FLOAT32, ReduceOp.SUM)));
        float base = n * (n + 1) / 2f;
        return () -> countWrong(n, r -> check(buf.get(r)[1], COUNT, i -> base + n * (i % 7)));
    }

    private static Verifier broadcast(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        int root = n - 1;
        fill(buf.get(root)[0], COUNT, i -> i * 0.5f);
        waitAll(each(comms, (c, r) -> c.broadcast(buf.get(r)[0], buf.get(r)[1], COUNT, DataType.FLOAT32, root)));
        return () -> countWrong(n, r -> check(buf.get(r)[1], COUNT, i -> i * 0.5f));
    }

    private static Verifier allGather(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        for (int rank = 0; rank < n; rank++) fillRank(buf, rank, COUNT, (r, i) -> r * 1000 + (i % 100));
        waitAll(each(comms, (c, r) -> c.allGather(buf.get(r)[0], buf.get(r)[1], COUNT, DataType.FLOAT32)));
        return () -> countWrong(n, r -> check(buf.get(r)[1], (long) COUNT * n, i -> (i / COUNT) * 1000 + (i % COUNT % 100)));
    }

    private static Verifier reduceScatter(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        for (int rank = 0; rank < n; rank++) fillRank(buf, rank, (long) COUNT * n, (r, i) -> (i + r) % 11);
        waitAll(each(comms, (c, r) -> c.reduceScatter(buf.get(r)[0], buf.get(r)[1], COUNT, DataType.FLOAT32, ReduceOp.MAX)));
        return () -> countWrong(n, r -> check(buf.get(r)[1], COUNT, i -> {
            long g = (long) r * COUNT + i;
            float max = 0;
            for (int s = 0; s < n; s++) max = Math.max(max, (g + s) % 11);
            return max;
        }));
    }

    private static Verifier allToAll(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        int block = COUNT / n;
        for (int rank = 0; rank < n; rank++) fillRank(buf, rank, (long) block * n, (r, i) -> r * 100 + i / block);
        waitAll(each(comms, (c, r) -> c.allToAll(buf.get(r)[0], buf.get(r)[1], block, DataType.FLOAT32)));
        // Block j of rank r's result came from rank j, which sent its block r.
        return () -> countWrong(n, r -> check(buf.get(r)[1], (long) block * n, i -> (i / block) * 100 + r));
    }

    private static Verifier ring(List<Communicator> comms, List<Buffer[]> buf) throws Exception {
        int n = comms.size();
        for (int rank = 0; rank < n; rank++) fillRank(buf, rank, COUNT, (r, i) -> r + i % 3);
        waitAll(each(comms, (c, r) -> Group.create()
                .add(c, Operation.send(buf.get(r)[0], COUNT, DataType.FLOAT32, (r + 1) % n))
                .add(c, Operation.recv(buf.get(r)[1], COUNT, DataType.FLOAT32, (r + n - 1) % n))
                .submit()));
        return () -> countWrong(n, r -> check(buf.get(r)[1], COUNT, i -> (r + n - 1) % n + i % 3));
    }

    // ---- helpers

    private interface PerRank {
        Work issue(Communicator c, int rank);
    }

    private interface Value {
        float at(long i);
    }

    private interface RankCheck {
        boolean ok(int rank);
    }

    private static List<Work> each(List<Communicator> comms, PerRank op) {
        List<Work> works = new ArrayList<>();
        for (int r = 0; r < comms.size(); r++) works.add(op.issue(comms.get(r), r));
        return works;
    }

    private static void waitAll(List<Work> works) throws Exception {
        CompletableFuture.allOf(works.toArray(new CompletableFuture<?>[0])).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private interface RankValue {
        float at(int rank, long i);
    }

    private static void fillRank(List<Buffer[]> buf, int rank, long count, RankValue v) {
        fill(buf.get(rank)[0], count, i -> v.at(rank, i));
    }

    private static void fill(Buffer b, long count, Value v) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (count * 4)).order(ByteOrder.nativeOrder());
        for (long i = 0; i < count; i++) host.putFloat(v.at(i));
        host.flip();
        b.write(0, host);
    }

    private static boolean check(Buffer b, long count, Value expected) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (count * 4)).order(ByteOrder.nativeOrder());
        b.read(0, host);
        host.flip();
        for (long i = 0; i < count; i++) {
            float got = host.getFloat();
            if (got != expected.at(i)) {
                System.out.printf("    element %d: got %s, expected %s%n", i, got, expected.at(i));
                return false;
            }
        }
        return true;
    }

    private static int countWrong(int n, RankCheck check) {
        int wrong = 0;
        for (int r = 0; r < n; r++) if (!check.ok(r)) wrong++;
        return wrong;
    }
}
