package org.jccl.core.host;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Random;
import java.util.concurrent.ExecutionException;
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
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.rendezvous.RendezvousClient;

/**
 * A rank of {@link ChaosTest}'s jobs: joins through the rendezvous, then issues a mixed stream of operations (the same
 * seeded sequence on every rank: all-reduce, broadcast, all-gather, reduce-scatter, all-to-all, a send/recv ring in a
 * group), a few in flight, until {@link #OPERATIONS} are done or one fails. Standard input takes the controller's
 * faults for this rank: {@code cut} (every connection to a peer reset, as a cut cable would) and {@code corrupt} (a
 * malformed frame to the next rank).
 *
 * <p>After a failure it reports how every pending work ended, then — unless it is the victim the controller named
 * under the key {@code chaos-victim} — forms a new communicator with the other survivors and checks an all-reduce on
 * it. Without a failure it checks that the rendezvous is gone (the controller closed it) and that the communicator
 * still works. Then it closes everything and reports the threads left; any unexpected failure exits non-zero.
 */
public final class ChaosRankMain {
    /** Operations each rank issues when nothing fails. */
    static final int OPERATIONS = 300;
    private static final int IN_FLIGHT = 3;
    private static final int MAX_COUNT = 16_384;
    private static final long WAIT_SECONDS = 60;

    private ChaosRankMain() {
    }

    /** Runs one rank; exits non-zero on any unexpected failure. */
    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(System.getenv("CHAOS_SEED"));
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            UniqueId id = rdzv.shareUniqueIdNow("chaos-id", host::newUniqueId);
            Communicator comm = host.initRank(id, n, rank, -1).get(WAIT_SECONDS, TimeUnit.SECONDS);
            listenForFaults((NetworkClique) ((HostComm) org.jccl.core.Modules.context(comm).driverComm()).transport(), rank, n);
            System.out.println("running");
            boolean failed;
            try {
                failed = run(host, comm, n, seed);
            } finally {
                comm.close();
            }
            if (failed) recover(host, rdzv.client(), rank, n);
            else rendezvousIsGoneButTheCommunicatorWorked(rdzv);
        }
        System.out.println("network threads left: " + CrossProcessRankMain.threadsLeft("jccl-host-net"));
        System.out.println("stream threads left: " + CrossProcessRankMain.threadsLeft("jccl-host-stream"));
    }

    /** Issues the mixed stream; true if a work failed (then every pending work's end is reported). */
    private static boolean run(Backend host, Communicator comm, int n, long seed) throws Exception {
        Random random = new Random(seed); // the same sequence on every rank, so collectives match
        ArrayDeque<Work> inFlight = new ArrayDeque<>();
        try (Buffer a = host.allocate(0, 4L * n * MAX_COUNT); Buffer b = host.allocate(0, 4L * n * MAX_COUNT)) {
            try {
                for (int i = 1; i <= OPERATIONS; i++) {
                    inFlight.add(issue(comm, random, a, b, n));
                    if (inFlight.size() >= IN_FLIGHT) inFlight.poll().get(WAIT_SECONDS, TimeUnit.SECONDS);
                    if (i % 10 == 0) System.out.println("issued " + i);
                }
                while (!inFlight.isEmpty()) inFlight.poll().get(WAIT_SECONDS, TimeUnit.SECONDS);
                System.out.println("completed " + OPERATIONS);
                return false;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                System.out.println("first failure: " + cause.getClass().getSimpleName() + " typed=" + (cause instanceof JcclException)
                        + ": " + cause.getMessage());
            }
            int untyped = 0;
            for (Work w : inFlight) {
                try {
                    w.get(WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof JcclException)) untyped++;
                }
            }
            System.out.println("pending works left: " + inFlight.size() + ", untyped failures: " + untyped);
            System.out.println("communicator open: " + comm.isOpen());
            return true;
        }
    }

    private static Work issue(Communicator comm, Random random, Buffer a, Buffer b, int n) {
        long count = 1 + random.nextInt(MAX_COUNT);
        int kind = random.nextInt(6);
        int root = random.nextInt(n);
        int rank = comm.rank();
        return switch (kind) {
            case 0 -> comm.allReduce(a, b, count, DataType.FLOAT32, ReduceOp.SUM);
            case 1 -> comm.broadcast(a, b, count, DataType.FLOAT32, root);
            case 2 -> comm.allGather(a, b, count, DataType.FLOAT32);
            case 3 -> comm.reduceScatter(a, b, count, DataType.FLOAT32, ReduceOp.MAX);
            case 4 -> comm.allToAll(a, b, count, DataType.FLOAT32);
            default -> Group.create()
                    .add(comm, Operation.send(a, count, DataType.FLOAT32, (rank + 1) % n))
                    .add(comm, Operation.recv(b, count, DataType.FLOAT32, (rank + n - 1) % n))
                    .submit();
        };
    }

    /** The survivors (all but the victim the controller named) form a new communicator and check an all-reduce. */
    private static void recover(Backend host, RendezvousClient client, int rank, int n) throws Exception {
        Duration wait = Duration.ofSeconds(WAIT_SECONDS);
        int victim = Integer.parseInt(new String(client.getNow("chaos-victim", wait), StandardCharsets.UTF_8));
        if (victim == rank) {
            System.out.println("victim: not rejoining");
            return;
        }
        int newRank = rank < victim ? rank : rank - 1;
        int survivors = n - 1;
        UniqueId id;
        if (newRank == 0) {
            id = host.newUniqueId();
            client.setUniqueId("chaos-id-2", id).get(WAIT_SECONDS, TimeUnit.SECONDS);
        } else {
            id = client.getUniqueId("chaos-id-2", wait).get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        try (Communicator again = host.initRank(id, survivors, newRank, -1).get(WAIT_SECONDS, TimeUnit.SECONDS);
             Buffer b = host.allocate(0, 4)) {
            b.write(0, new float[] {rank + 1});
            again.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM).get(WAIT_SECONDS, TimeUnit.SECONDS);
            System.out.println("recovered: rank " + newRank + " of " + survivors + ", sum " + (int) b.readFloats(0, 1)[0]);
        }
    }

    /** Without a fault in the communicator the controller closed the rendezvous server mid-job. */
    private static void rendezvousIsGoneButTheCommunicatorWorked(Rendezvous rdzv) {
        try {
            rdzv.barrierNow("after-the-job");
            System.out.println("rendezvous: still answering");
        } catch (RuntimeException e) {
            System.out.println("rendezvous: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static void listenForFaults(NetworkClique clique, int rank, int n) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.equals("cut")) cut(clique, rank, n);
                    if (line.equals("corrupt")) corrupt(clique.channelTo((rank + 1) % n));
                }
            } catch (IOException e) {
                System.out.println("commands: " + e);
            }
        }, "chaos-commands");
        t.setDaemon(true);
        t.start();
    }

    /** Resets every connection to a peer (SO_LINGER 0: a TCP RST, wherever a frame was), as a cut cable would. */
    private static void cut(NetworkClique clique, int rank, int n) {
        for (int peer = 0; peer < n; peer++) {
            Channel ch = peer == rank ? null : clique.channelTo(peer);
            if (ch == null) continue;
            ch.config().setOption(ChannelOption.SO_LINGER, 0);
            ch.close();
        }
        System.out.println("cut every connection");
    }

    /** A frame of an unknown type on an authenticated connection. */
    private static void corrupt(Channel ch) {
        if (ch == null) return;
        ch.writeAndFlush(Unpooled.buffer().writeByte(99).writeLong(0x5ca1ab1eL));
        System.out.println("sent a corrupt frame");
    }
}
