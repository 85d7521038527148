package org.jccl.core.host;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * A rank of a host-backend job with one process per rank, started by the launcher (or a test): creates the
 * communicator through the rendezvous as a user would, then runs the mode args[0] names.
 *
 * <ul>
 *   <li>{@code ops}: every operation, checked byte for byte against the in-JVM backend run in this process.</li>
 *   <li>{@code pipeline}: all-reduces with several in flight until one fails (a peer was killed); reports how
 *       the failure looked and whether everything was released, then exits 0.</li>
 *   <li>{@code closedPeer}: rank 0 closes its communicator; once it has, every other rank issues an all-reduce and
 *       reports how it failed (the work timeout is 10 minutes: only a failure told at once ends it in time).</li>
 * </ul>
 */
public final class CrossProcessRankMain {
    private CrossProcessRankMain() {
    }

    /** Runs one rank; exits non-zero on any unexpected failure. */
    public static void main(String[] args) throws Exception {
        String mode = args.length == 0 ? "ops" : args[0];
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            UniqueId id = rdzv.shareUniqueIdNow("host-id", host::newUniqueId);
            Communicator comm = host.initRank(id, n, rank, -1).get(60, TimeUnit.SECONDS);
            System.out.println("rank " + rank + " created " + comm.describe());
            switch (mode) {
                case "ops" -> ops(host, comm, n);
                case "pipeline" -> pipeline(host, comm);
                case "closedPeer" -> closedPeer(host, comm, rdzv);
                default -> throw new IllegalArgumentException("unknown mode " + mode);
            }
        }
        System.out.println("network threads left: " + threadsLeft("jccl-host-net"));
        System.out.println("stream threads left: " + threadsLeft("jccl-host-stream"));
    }

    private static void ops(Backend host, Communicator comm, int n) throws Exception {
        List<Communicator> reference = host.initAll(n).get(60, TimeUnit.SECONDS);
        try {
            int checked = OpSuite.check(host, comm, reference);
            System.out.println("checked " + checked + " cases, all identical to the in-JVM backend");
            splitByParity(host, comm);
        } finally {
            for (Communicator c : reference) c.close();
            comm.close();
        }
    }

    /** Splits the ranks by parity (across processes) and checks an all-reduce on each part. */
    private static void splitByParity(Backend host, Communicator comm) throws Exception {
        int rank = comm.rank();
        try (Communicator part = comm.split(rank % 2, rank).get(60, TimeUnit.SECONDS);
             Buffer b = host.allocate(0, 4)) {
            b.write(0, java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.nativeOrder()).putFloat(0, rank + 1));
            part.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            java.nio.ByteBuffer got = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.nativeOrder());
            b.read(0, got);
            float expected = 0;
            for (int r = rank % 2; r < comm.size(); r += 2) expected += r + 1;
            if (got.getFloat(0) != expected) throw new AssertionError("split all-reduce gave " + got.getFloat(0) + ", not " + expected);
            System.out.println("split: rank " + part.rank() + " of " + part.size() + " in part " + rank % 2 + ", sum " + expected);
        }
    }

    private static void closedPeer(Backend host, Communicator comm, Rendezvous rdzv) throws Exception {
        if (comm.rank() == 0) {
            comm.close();
            rdzv.barrierNow("rank 0 closed");
            return;
        }
        rdzv.barrierNow("rank 0 closed");
        try (Buffer b = host.allocate(0, 16)) {
            comm.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            System.out.println("allReduce after rank 0 closed: completed");
        } catch (ExecutionException e) {
            System.out.println("allReduce after rank 0 closed: " + e.getCause().getClass().getSimpleName() + ": "
                    + e.getCause().getMessage());
        } finally {
            comm.close();
        }
    }

    private static void pipeline(Backend host, Communicator comm) throws Exception {
        long count = 1 << 18;
        List<Buffer> buffers = new ArrayList<>();
        ArrayDeque<Work> window = new ArrayDeque<>();
        try {
            Buffer in = host.allocate(0, count * 4);
            Buffer out = host.allocate(0, count * 4);
            buffers.add(in);
            buffers.add(out);
            int done = 0;
            try {
                while (true) {
                    window.add(comm.allReduce(in, out, count, DataType.FLOAT32, ReduceOp.SUM));
                    if (window.size() < 4) continue;
                    window.poll().get(120, TimeUnit.SECONDS);
                    if (++done == 3) System.out.println("pipeline running");
                }
            } catch (ExecutionException e) {
                System.out.println("failed with " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
            }
            int failedToo = 0;
            for (Work w : window) {
                try {
                    w.get(60, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failedToo++;
                }
            }
            System.out.println("later works failed: " + failedToo + " of " + window.size());
            System.out.println("communicator open: " + comm.isOpen());
        } finally {
            comm.close();
            for (Buffer b : buffers) b.close();
        }
        System.out.println("network users after close: " + HostNetwork.users());
    }

    /** Joins the threads whose names start with {@code prefix} (bounded) and counts those still alive. */
    static long threadsLeft(String prefix) throws InterruptedException {
        List<Thread> net = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(prefix)).toList();
        for (Thread t : net) t.join(TimeUnit.SECONDS.toMillis(5));
        return net.stream().filter(Thread::isAlive).count();
    }
}
