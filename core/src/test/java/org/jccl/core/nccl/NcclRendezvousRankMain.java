package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * One rank of {@link NcclRendezvousGpuTest}, started by the launcher: joins the rendezvous, shares rank 0's NCCL
 * unique id, creates its communicator on GPU {@code LOCAL_RANK}, runs every collective and a send/recv ring on
 * int32 and float32 data and checks each element. Prints {@code checks passed: N} or the wrong elements, and exits
 * non-zero on any failure.
 */
public final class NcclRendezvousRankMain {
    private static final int N = 4099;

    private NcclRendezvousRankMain() {
    }

    public static void main(String[] args) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        List<String> wrong = new ArrayList<>();
        int checks = 0;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("nccl/world", nccl::newUniqueId);
            int n = rdzv.worldSize();
            int rank = rdzv.rank();
            try (Communicator c = nccl.initRank(id, n, rank, rdzv.localRank()).get(120, TimeUnit.SECONDS);
                 Buffer send = nccl.allocate(c.device(), 8L * N * n);
                 Buffer recv = nccl.allocate(c.device(), 8L * N * n)) {
                for (DataType type : new DataType[] {DataType.INT32, DataType.FLOAT32}) {
                    for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX}) {
                        fill(send, (long) N * n, type, rank);
                        run(c.allReduce(send, recv, N, type, op));
                        checks += check(recv, N, type, i -> reduce(n, i, op), "allReduce " + type + " " + op, wrong);
                        fill(send, (long) N * n, type, rank);
                        run(c.reduceScatter(send, recv, N, type, op));
                        checks += check(recv, N, type, i -> reduce(n, (long) rank * N + i, op), "reduceScatter " + type + " " + op, wrong);
                    }
                    fill(send, N, type, rank);
                    run(c.broadcast(send, recv, N, type, n - 1));
                    checks += check(recv, N, type, i -> value(n - 1, i), "broadcast " + type, wrong);
                    run(c.allGather(send, recv, N, type));
                    checks += check(recv, (long) N * n, type, i -> value((int) (i / N), i % N), "allGather " + type, wrong);
                    fill(send, (long) N * n, type, rank);
                    run(c.allToAll(send, recv, N, type));
                    checks += check(recv, (long) N * n, type, i -> value((int) (i / N), (long) rank * N + i % N), "allToAll " + type, wrong);
                    fill(send, N, type, rank);
                    run(c.submitGroup(List.of(Operation.send(send, N, type, (rank + 1) % n),
                            Operation.recv(recv, N, type, (rank + n - 1) % n))));
                    checks += check(recv, N, type, i -> value((rank + n - 1) % n, i), "send/recv ring " + type, wrong);
                }
            }
            rdzv.barrierNow("done");
        }
        if (wrong.isEmpty()) {
            System.out.println("checks passed: " + checks);
            System.exit(0);
        }
        wrong.forEach(System.out::println);
        System.exit(1);
    }

    private interface Expected {
        double at(long i);
    }

    private static double value(int rank, long i) {
        return (rank * 3L + i) % 7 + 1;
    }

    private static double reduce(int n, long i, ReduceOp op) {
        double acc = value(0, i);
        for (int r = 1; r < n; r++) acc = op == ReduceOp.MAX ? Math.max(acc, value(r, i)) : acc + value(r, i);
        return acc;
    }

    private static void run(Work w) throws Exception {
        w.get(60, TimeUnit.SECONDS);
    }

    private static void fill(Buffer b, long count, DataType type, int rank) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (count * 4)).order(ByteOrder.nativeOrder());
        for (long i = 0; i < count; i++) {
            if (type == DataType.INT32) host.putInt((int) value(rank, i));
            else host.putFloat((float) value(rank, i));
        }
        host.flip();
        b.write(0, host);
    }

    private static int check(Buffer b, long count, DataType type, Expected expected, String what, List<String> wrong) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (count * 4)).order(ByteOrder.nativeOrder());
        b.read(0, host);
        for (long i = 0; i < count; i++) {
            double got = type == DataType.INT32 ? host.getInt((int) (i * 4)) : host.getFloat((int) (i * 4));
            if (got != expected.at(i)) {
                wrong.add(what + "[" + i + "] = " + got + ", expected " + expected.at(i));
                return 0;
            }
        }
        return 1;
    }
}
