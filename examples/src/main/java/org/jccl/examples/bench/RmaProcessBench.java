package org.jccl.examples.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Work;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.jccl.rma.channel.BlockChannel;
import reactor.core.publisher.Flux;

/**
 * One-sided operations with one process per GPU, started by jccl's launcher, measured with the method of
 * {@code examples/bench/raw_rma_procs.c} so that the two run in one sitting:
 *
 * <pre>
 *   Launcher --nproc 2 -- org.jccl.examples.bench.RmaProcessBench pingpong  rank 0 puts 8 B into rank 1, whose stream waits
 *                                        and puts 8 B back; rank 0's wait seen complete by its host: p50/p99/p99.9
 *   Launcher --nproc N -- ... ring       every rank puts into the next and waits for the previous, 8 B to 32 MiB
 *                                        back to back: rank 0's GB/s, with every link busy at once
 *   Launcher --nproc 2 -- ... channel    a BlockChannel from rank 0 to rank 1, 64 KiB to 16 MiB blocks, 8 slots, each
 *                                        size once unmeasured first,
 *                                        timed by the consumer from the start to its last block
 * </pre>
 * Each rank uses its local GPU (NCCL 2.29.2+ for puts); without a GPU, the host backend over TCP.
 */
public final class RmaProcessBench {
    private static final long MAX = 32L << 20;
    private static final int SLOTS = 8;

    private RmaProcessBench() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "pingpong";
        Backend backend = Jccl.backend();
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator comm = backend.initRank(rdzv.shareUniqueIdNow("id", backend::newUniqueId), rdzv.worldSize(),
                     rdzv.rank(), backend.deviceCount() > 0 ? rdzv.localRank() : -1).get(120, TimeUnit.SECONDS)) {
            if (comm.rank() == 0) System.out.println("# " + backend.describe() + ", " + comm.size() + " processes, mode " + mode);
            switch (mode) {
                case "pingpong" -> pingPong(comm);
                case "ring" -> ring(comm);
                case "channel" -> channel(backend, comm);
                default -> throw new IllegalArgumentException("mode must be pingpong, ring or channel, not " + mode);
            }
        }
    }

    private static void pingPong(Communicator comm) throws Exception {
        OneSided rma = OneSided.of(comm);
        Window w = rma.register(rma.allocate(1 << 20), WindowFlag.COLL_SYMMETRIC).get(120, TimeUnit.SECONDS);
        Buffer source = w.buffer().slice(1 << 19, 8);
        int samples = 5000;
        long[] nanos = new long[samples];
        comm.barrier().get(120, TimeUnit.SECONDS);
        for (int i = -500; i < samples; i++) {
            if (comm.rank() == 0) {
                long start = System.nanoTime();
                rma.putSignal(w, source, 8, DataType.UINT8, 1, 0);
                Work back = rma.waitSignal(SignalWait.of(1, 1));
                while (!back.isDone()) Thread.onSpinWait();
                back.join();
                if (i >= 0) nanos[i] = System.nanoTime() - start;
            } else if (comm.rank() == 1) {
                rma.waitSignal(SignalWait.of(0, 1));
                Work put = rma.putSignal(w, source, 8, DataType.UINT8, 0, 0); // stream-ordered after the wait
                while (!put.isDone()) Thread.onSpinWait();
                put.join();
            }
        }
        if (comm.rank() == 0) {
            Arrays.sort(nanos);
            System.out.printf("8 B ping-pong seen by rank 0's host: p50 %.2f us, p99 %.2f us, p99.9 %.2f us (%d samples)%n",
                    nanos[samples / 2] / 1e3, nanos[samples * 99 / 100] / 1e3, nanos[samples * 999 / 1000] / 1e3, samples);
        }
        w.closeAsync().get(120, TimeUnit.SECONDS);
        w.buffer().close();
    }

    /** The source lies in the upper half of each rank's window; puts land in the lower half of the next rank's. */
    private static void ring(Communicator comm) throws Exception {
        int n = comm.size();
        int next = (comm.rank() + 1) % n;
        int previous = (comm.rank() + n - 1) % n;
        OneSided rma = OneSided.of(comm);
        Window w = rma.register(rma.allocate(2 * MAX), WindowFlag.COLL_SYMMETRIC).get(120, TimeUnit.SECONDS);
        if (comm.rank() == 0) System.out.println("#     bytes  iters    us/put    GB/s");
        for (long bytes = 8; bytes <= MAX; bytes *= 4) {
            Buffer source = w.buffer().slice(MAX, bytes);
            int iters = bytes <= (1 << 20) ? 500 : 50;
            for (int round = 0; round < 2; round++) { // a warm-up round, then the measured one
                comm.barrier().get(120, TimeUnit.SECONDS);
                long start = System.nanoTime();
                Work last = null;
                for (int i = 0; i < iters; i++) {
                    rma.putSignal(w, source, bytes, DataType.UINT8, next, 0);
                    last = rma.waitSignal(SignalWait.of(previous, 1));
                }
                last.get(120, TimeUnit.SECONDS);
                double seconds = (System.nanoTime() - start) / 1e9;
                if (round == 1 && comm.rank() == 0) {
                    System.out.printf("%11d %6d %10.2f %7.2f%n", bytes, iters, seconds * 1e6 / iters, bytes * iters / seconds / 1e9);
                }
            }
        }
        w.closeAsync().get(120, TimeUnit.SECONDS);
        w.buffer().close();
    }

    private static void channel(Backend backend, Communicator comm) throws Exception {
        ReactiveCommunicator shape = ReactiveCommunicator.of(comm);
        if (comm.rank() == 1) System.out.println("#     block  blocks    blocks/s    GB/s");
        for (long block = 64 << 10; block <= 16L << 20; block *= 4) {
            int count = (int) Math.max(64, Math.min(2000, (2L << 30) / block));
            for (int round = 0; round < 2; round++) { // a warm-up round (the JIT, the first blocks), then the measured one
                BlockChannel ch = BlockChannel.open(shape, 0, 1, SLOTS, block).block(Duration.ofSeconds(120));
                comm.barrier().get(120, TimeUnit.SECONDS);
                long start = System.nanoTime();
                if (comm.rank() == 0) {
                    try (Buffer source = backend.allocate(comm.device(), block)) {
                        ch.send(Flux.range(0, count).map(i -> source)).block(Duration.ofSeconds(300));
                    }
                } else if (comm.rank() == 1) {
                    long received = ch.receive().doOnNext(b -> b.release()).count().block(Duration.ofSeconds(300));
                    double seconds = (System.nanoTime() - start) / 1e9;
                    if (round == 1) {
                        System.out.printf("%11d %7d %11.0f %7.2f%n", block, received, received / seconds, block * received / seconds / 1e9);
                    }
                }
                ch.close().block(Duration.ofSeconds(120));
            }
        }
    }
}
