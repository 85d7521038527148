package org.jccl.examples.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Work;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.jccl.rma.channel.BlockChannel;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One-sided operations measured, in one process: rank 0 puts into the last rank's window (on one GPU, its own),
 * with the same method as {@code examples/bench/raw_rma_bench.c}, so the two can be run in one sitting.
 *
 * <pre>
 *   RmaBench bandwidth [GPUs]   putSignal + waitSignal in one group, 8 B to 32 MiB: pairs issued back to back, wall clock
 *   RmaBench latency [GPUs]     8 B put, then the wait's completion seen by the host: p50/p99 of 2000 samples
 *   RmaBench channel [GPUs]     BlockChannel throughput, 64 KiB to 16 MiB blocks, 8 slots
 * </pre>
 * Uses the NCCL backend when a GPU is present (NCCL 2.29.2+ for puts), else the host backend.
 */
public final class RmaBench {
    private static final long MAX = 64L << 20;

    private RmaBench() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "bandwidth";
        Backend backend = Jccl.backend();
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : Math.max(1, Math.min(2, backend.deviceCount()));
        List<Communicator> comms = backend.initAll(ranks).get(60, TimeUnit.SECONDS);
        System.out.println("# " + backend.describe() + ", " + ranks + " rank(s), rank 0 puts into rank " + (ranks - 1));
        try {
            switch (mode) {
                case "bandwidth" -> bandwidth(comms);
                case "latency" -> latency(comms);
                case "channel" -> channel(backend, comms);
                default -> throw new IllegalArgumentException("mode must be bandwidth, latency or channel, not " + mode);
            }
        } finally {
            comms.forEach(Communicator::close);
        }
    }

    private static List<Window> windows(List<Communicator> comms, long bytes) throws Exception {
        return OneSided.registerAll(comms, bytes, WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
    }

    private static void release(List<Window> windows) throws Exception {
        OneSided.closeAll(windows).get(60, TimeUnit.SECONDS);
    }

    /** The source lies in the upper half of rank 0's window, the target is the lower half of the last rank's. */
    private static void bandwidth(List<Communicator> comms) throws Exception {
        List<Window> ws = windows(comms, 2 * MAX);
        OneSided r0 = OneSided.of(comms.get(0));
        OneSided rl = OneSided.of(comms.get(comms.size() - 1));
        Window w0 = ws.get(0);
        System.out.println("#     bytes  iters    us/pair    GB/s");
        for (long bytes = 8; bytes <= MAX; bytes *= 4) {
            Buffer source = w0.buffer().slice(MAX, bytes);
            int iters = bytes <= (1 << 20) ? 500 : 50;
            for (int round = 0; round < 2; round++) { // a warm-up round, then the measured one
                long start = System.nanoTime();
                Work last = null;
                for (int i = 0; i < iters; i++) last = pair(comms, r0, rl, w0, source, bytes);
                last.get(120, TimeUnit.SECONDS);
                double seconds = (System.nanoTime() - start) / 1e9;
                if (round == 1) {
                    System.out.printf("%11d %6d %10.2f %7.2f%n", bytes, iters, seconds * 1e6 / iters, bytes * iters / seconds / 1e9);
                }
            }
        }
        release(ws);
    }

    /** One put and its wait in one group, as the raw loop issues them. */
    private static Work pair(List<Communicator> comms, OneSided r0, OneSided rl, Window w0, Buffer source, long bytes) {
        int last = comms.size() - 1;
        return Group.create()
                .add(comms.get(0), r0.putSignalOperation(w0, source, bytes, DataType.UINT8, last, 0, 0, 0))
                .add(comms.get(last), rl.waitSignalOperation(SignalWait.of(0, 1)))
                .submit();
    }

    private static void latency(List<Communicator> comms) throws Exception {
        List<Window> ws = windows(comms, 1 << 20);
        OneSided r0 = OneSided.of(comms.get(0));
        OneSided rl = OneSided.of(comms.get(comms.size() - 1));
        Buffer source = ws.get(0).buffer().slice(1 << 19, 8);
        int samples = 2000;
        long[] nanos = new long[samples];
        for (int i = -500; i < samples; i++) {
            long start = System.nanoTime();
            Work wait = pair(comms, r0, rl, ws.get(0), source, 8);
            while (!wait.isDone()) Thread.onSpinWait();
            wait.join();
            if (i >= 0) nanos[i] = System.nanoTime() - start;
        }
        Arrays.sort(nanos);
        System.out.printf("8 B put -> wait seen by the host: p50 %.2f us, p99 %.2f us (%d samples)%n",
                nanos[samples / 2] / 1e3, nanos[samples * 99 / 100] / 1e3, samples);
        release(ws);
    }

    private static void channel(Backend backend, List<Communicator> comms) {
        List<ReactiveCommunicator> shapes = comms.stream().map(ReactiveCommunicator::of).toList();
        int last = comms.size() - 1;
        int slots = 8;
        System.out.println("#     block  blocks    blocks/s    GB/s");
        for (long block = 64 << 10; block <= 16L << 20; block *= 4) {
            long blockBytes = block;
            int count = (int) Math.max(64, Math.min(2000, (2L << 30) / block));
            List<BlockChannel> ch = Flux.fromIterable(shapes).flatMapSequential(s -> BlockChannel.open(s, 0, last, slots, blockBytes))
                    .collectList().block(Duration.ofSeconds(60));
            Buffer source = backend.allocate(comms.get(0).device(), blockBytes);
            long start = System.nanoTime();
            Mono<Long> sent = ch.get(0).send(Flux.range(0, count).map(i -> source));
            Mono<Void> received = ch.get(last).receive().doOnNext(b -> b.release()).then();
            Mono.when(sent, received).block(Duration.ofSeconds(300));
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("%11d %7d %11.0f %7.2f%n", blockBytes, count, count / seconds, blockBytes * count / seconds / 1e9);
            Flux.fromIterable(ch).flatMap(BlockChannel::close).blockLast(Duration.ofSeconds(60));
            source.close();
        }
    }
}
