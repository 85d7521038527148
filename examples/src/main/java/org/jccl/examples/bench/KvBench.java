package org.jccl.examples.bench;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Stream;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvDelivered;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvReceiver;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvSend;
import org.jccl.rma.kv.KvSender;

/**
 * KV-cache transfer throughput and latency, one process per GPU under jccl's launcher, with the model and method of
 * {@code examples/bench/raw_kv_bench.c}, to be run in one sitting beside it: Llama-3-8B's KV cache (32 layers, K and V,
 * 8 KV heads, head dim 128, bf16, 16-token blocks), random block tables on both sides.
 *
 * <pre>
 *   launcher --nproc N -- org.jccl.examples.bench.KvBench [tokens,..] [repeats] [path] [gap-us] [prefill ranks] [split]
 * </pre>
 * Ranks below {@code prefill ranks} (default 1) send, the others receive. First, unmeasured, 25 requests of every
 * prompt length; then per prompt length:
 * <ul>
 *   <li>{@code whole}: each prefill rank sends {@code repeats} requests one after the other, every layer ready at
 *       once; the time is the sender's, from the first layer's copy being issued to decode's word that every layer is
 *       usable;</li>
 *   <li>{@code aggregate}: every prefill rank keeps 4 requests in flight; the bytes of all of them over the time from
 *       the first start to the last end;</li>
 *   <li>with {@code gap-us} above 0, {@code streaming}: layers marked ready one by one, {@code gap-us} apart (a model
 *       computing them): how long after the last layer was marked ready it was usable on decode, for decode's host
 *       (the request's {@code done()}) and, on the LSA kernel path, for decode's stream (a marker after
 *       {@code KvIncoming.layerOn}, seen by the event thread).</li>
 * </ul>
 * With {@code split}, each request goes to every decode rank, which holds its share of the heads (decode TP = N × the
 * prefill's); otherwise requests go round the decode ranks. Without the launcher, two ranks of this process.
 */
public final class KvBench {
    private static final int LAYERS = 32;
    private static final int HEADS = 8;
    private static final int TOKENS_PER_BLOCK = 16;
    private static final int IN_FLIGHT = 4;
    private static final int WARM_UP = 3;
    /**
     * Unmeasured requests of every size before the first measurement: without them the first size measured pays the
     * JIT's warm-up of the control path (2 × H200, 2026-11-26: 1k tokens measured first 29.2 GB/s, measured again after
     * the 4k series 105.3 GB/s).
     */
    private static final int WARM_UP_PER_SIZE = 25;
    private static final Map<String, Long> USABLE = new ConcurrentHashMap<>();

    private final int rank;
    private final int prefillRanks;
    private final int worldSize;
    private final boolean split;
    private final RendezvousClient store;

    private KvBench(int rank, int prefillRanks, int worldSize, boolean split, RendezvousClient store) {
        this.rank = rank;
        this.prefillRanks = prefillRanks;
        this.worldSize = worldSize;
        this.split = split;
        this.store = store;
    }

    /** Prefill ranks hold every head; with a split, decode rank {@code d} holds its share. */
    static KvLayout layout(int blocks, int heads, int headOffset) {
        return KvLayout.builder().layers(LAYERS).tensors(2).blocks(blocks).tokensPerBlock(TOKENS_PER_BLOCK).kvHeads(heads)
                .headOffset(headOffset).headDim(128).type(DataType.BFLOAT16).build();
    }

    private KvLayout layoutOf(int r, int blocks) {
        int decoders = worldSize - prefillRanks;
        if (r < prefillRanks || !split) return layout(blocks, HEADS, 0);
        return layout(blocks, HEADS / decoders, (r - prefillRanks) * (HEADS / decoders));
    }

    public static void main(String[] args) throws Exception {
        int[] tokens = Arrays.stream((args.length > 0 ? args[0] : "1024,4096,16384").split(",")).mapToInt(Integer::parseInt).toArray();
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        KvPathKind path = args.length > 2 ? KvPathKind.valueOf(args[2]) : KvPathKind.AUTO;
        long gapMicros = args.length > 3 ? Long.parseLong(args[3]) : 0;
        int prefillRanks = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        boolean split = args.length > 5 && args[5].equals("split");
        int blocks = 2 * IN_FLIGHT * Arrays.stream(tokens).max().orElseThrow() / TOKENS_PER_BLOCK;
        long staging = 64L << 20;
        Backend backend = Jccl.backend();
        if (System.getenv("RANK") == null && System.getenv("JCCL_RANK") == null) { // not under a launcher
            inProcess(backend, blocks, staging, tokens, repeats, path, gapMicros);
            return;
        }
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            KvBench bench = new KvBench(rdzv.rank(), prefillRanks, rdzv.worldSize(), split, rdzv.client());
            UniqueId id = rdzv.shareUniqueIdNow("kvbench-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, rdzv.worldSize(), rdzv.rank(), device).get(120, TimeUnit.SECONDS);
            KvPool pool = KvPool.allocate(comm, bench.layoutOf(rdzv.rank(), blocks), staging).get(300, TimeUnit.SECONDS);
            KvOptions options = KvOptions.builder().path(path).rendezvous(rdzv.client()).build();
            if (rdzv.rank() >= prefillRanks) {
                KvReceiver receiver = decode(pool, options, rdzv.client());
                rdzv.barrierNow("kvbench-receiving");
                rdzv.barrierNow("kvbench-done");
                receiver.close();
            } else {
                rdzv.barrierNow("kvbench-receiving");
                KvSender sender = KvSender.open(pool, options);
                bench.prefill(sender, tokens, repeats, gapMicros);
                sender.close();
                rdzv.barrierNow("kvbench-done");
            }
            pool.close();
            comm.close();
        }
    }

    /** Both ranks in this process: two GPUs when there are, else host ranks. */
    private static void inProcess(Backend backend, int blocks, long staging, int[] tokens, int repeats, KvPathKind path,
                                  long gapMicros) throws Exception {
        int ranks = backend.kind() == BackendKind.HOST ? 2 : Math.min(2, backend.deviceCount());
        KvBench bench = new KvBench(0, 1, ranks, false, null);
        List<Communicator> comms = backend.initAll(ranks).get(120, TimeUnit.SECONDS);
        List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
        for (Communicator c : comms) allocating.add(KvPool.allocate(c, layout(blocks, HEADS, 0), staging));
        List<KvPool> pools = new ArrayList<>();
        for (CompletableFuture<KvPool> f : allocating) pools.add(f.get(300, TimeUnit.SECONDS));
        KvOptions options = KvOptions.builder().path(path).build();
        KvReceiver receiver = decode(pools.get(ranks - 1), options, null);
        KvSender sender = KvSender.open(pools.get(0), options);
        bench.prefill(sender, tokens, repeats, gapMicros);
        sender.close();
        receiver.close();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (KvPool p : pools) closing.add(p.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        comms.forEach(Communicator::close);
    }

    /**
     * A decode rank: takes every request into blocks of a pool allocator, frees them as soon as they are usable, and
     * publishes when each became usable (for the streaming series).
     */
    private static KvReceiver decode(KvPool pool, KvOptions options, RendezvousClient store) throws Exception {
        KvBlockPool blocks = new KvBlockPool(pool.layout().blocks());
        Communicator c = pool.communicator();
        Stream decodeStream = c.backend().createStream(c.device()); // decode's compute stream; lives as long as the bench
        return KvReceiver.open(pool, blocks, options, incoming -> {
            String name = incoming.request();
            if (name.startsWith("stream-") && incoming.signalsLayersOnDevice()) {
                // Where the decode model's kernels for the last layer would start: its stream passes the device wait.
                incoming.layerOn(incoming.layerCount() - 1, decodeStream);
                decodeStream.marker().thenApply(v -> System.nanoTime()) // seen by the event thread: publish off it
                        .thenAcceptAsync(passed -> publish(store, "kvbench-device/" + name, passed));
            }
            incoming.done().thenAccept(received -> {
                long usable = System.nanoTime(); // one clock for every process of this host
                blocks.free(received.blocks());
                if (name.startsWith("stream-")) publish(store, "kvbench/" + name, usable);
            });
        }).get(60, TimeUnit.SECONDS);
    }

    private static void publish(RendezvousClient store, String key, long nanos) {
        if (store != null) store.set(key, Long.toString(nanos).getBytes(StandardCharsets.UTF_8));
        else USABLE.put(key, nanos);
    }

    private static long published(RendezvousClient store, String key) throws InterruptedException {
        if (store != null) return Long.parseLong(new String(store.getNow(key, Duration.ofSeconds(30)), StandardCharsets.UTF_8));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!USABLE.containsKey(key) && System.nanoTime() < until) Thread.sleep(1); // the decode rank's thread sets it
        return USABLE.get(key);
    }

    /** The decode ranks a request goes to: all of them with a split, else the next one in turn. */
    private int[] destinations(int r) {
        int decoders = worldSize - prefillRanks;
        if (split) {
            int[] all = new int[decoders];
            for (int d = 0; d < decoders; d++) all[d] = prefillRanks + d;
            return all;
        }
        return new int[] {prefillRanks + Math.floorMod(r + rank, decoders)};
    }

    private void prefill(KvSender sender, int[] tokens, int repeats, long gapMicros) throws Exception {
        KvLayout layout = sender.pool().layout();
        if (rank == 0) {
            System.out.println("# " + sender.pool().communicator().backend().describe() + "; " + prefillRanks + " prefill, "
                    + (worldSize - prefillRanks) + " decode rank(s)" + (split ? ", heads split among them" : ""));
            System.out.println("# mode     tokens      bytes        ms      GB/s  path");
        }
        Random random = new Random(42 + rank);
        for (int t : tokens) {
            for (int r = 0; r < WARM_UP_PER_SIZE; r++) {
                List<KvSend> sends = send(sender, "warm-" + rank + "-" + t + "-" + r, t, r,
                        randomBlocks(random, layout.blocksFor(t), layout.blocks()));
                for (KvSend s : sends) s.allReady();
                wait(sends);
            }
        }
        for (int t : tokens) {
            int blocks = layout.blocksFor(t);
            double[] ms = new double[repeats];
            String usedPath = "";
            long bytes = 0;
            for (int r = -WARM_UP; r < repeats; r++) { // r < 0 warm up
                List<KvSend> sends = send(sender, "whole-" + rank + "-" + t + "-" + r, t, r, randomBlocks(random, blocks, layout.blocks()));
                for (KvSend s : sends) s.allReady();
                long b = 0;
                long nanos = 0;
                for (KvSend s : sends) {
                    KvDelivered d = s.done().get(120, TimeUnit.SECONDS);
                    usedPath = d.path().name();
                    b += d.bytes();
                    nanos = Math.max(nanos, d.transferNanos());
                }
                if (r < 0) continue;
                bytes = b;
                ms[r] = nanos / 1e6;
                if (rank == 0) System.out.printf("whole   %7d %10d %9.3f %9.1f  %s%n", t, b, ms[r], b / ms[r] / 1e6, usedPath);
            }
            Arrays.sort(ms);
            System.out.printf("median whole rank %d, %d tokens: %.3f ms, %.1f GB/s (%s)%n", rank, t, ms[repeats / 2],
                    bytes / ms[repeats / 2] / 1e6, usedPath);
            aggregate(sender, t, repeats, random);
            if (gapMicros > 0) streaming(sender, t, repeats, gapMicros, random);
        }
    }

    private List<KvSend> send(KvSender sender, String name, int tokens, int r, int[] source) {
        List<KvSend> sends = new ArrayList<>();
        for (int d : destinations(r)) sends.add(sender.send(new KvRequest(name + "-to" + d, d, tokens, source, Duration.ofSeconds(60))));
        return sends;
    }

    /** {@link #IN_FLIGHT} requests in flight per prefill rank; rank 0 adds up every prefill rank's bytes and window. */
    private void aggregate(KvSender sender, int tokens, int repeats, Random random) throws Exception {
        KvLayout layout = sender.pool().layout();
        int count = Math.max(repeats, 2 * IN_FLIGHT);
        ArrayDeque<List<KvSend>> inFlight = new ArrayDeque<>();
        long bytes = 0;
        long start = System.nanoTime();
        for (int r = 0; r < count; r++) {
            if (inFlight.size() == IN_FLIGHT) bytes += wait(inFlight.poll());
            // Blocks chosen out of this request's share of the pool, so requests in flight never share one.
            int share = layout.blocks() / IN_FLIGHT;
            int[] source = randomBlocks(random, layout.blocksFor(tokens), share);
            for (int i = 0; i < source.length; i++) source[i] += (r % IN_FLIGHT) * share;
            List<KvSend> sends = send(sender, "agg-" + rank + "-" + tokens + "-" + r, tokens, r, source);
            for (KvSend s : sends) s.allReady();
            inFlight.add(sends);
        }
        while (!inFlight.isEmpty()) bytes += wait(inFlight.poll());
        long end = System.nanoTime();
        String mine = bytes + "," + start + "," + end;
        if (store == null) {
            System.out.printf("aggregate %d tokens: %.1f GB/s%n", tokens, bytes / ((end - start) / 1e9) / 1e9);
            return;
        }
        store.setNow("kvbench/agg/" + tokens + "/" + rank, mine.getBytes(StandardCharsets.UTF_8));
        if (rank != 0) return;
        long total = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (int p = 0; p < prefillRanks; p++) {
            String[] v = new String(store.getNow("kvbench/agg/" + tokens + "/" + p, Duration.ofSeconds(120)),
                    StandardCharsets.UTF_8).split(",");
            total += Long.parseLong(v[0]);
            first = Math.min(first, Long.parseLong(v[1]));
            last = Math.max(last, Long.parseLong(v[2]));
        }
        System.out.printf("aggregate %d tokens, %d prefill rank(s), %d in flight each: %.1f GB/s into decode%n", tokens,
                prefillRanks, IN_FLIGHT, total / ((last - first) / 1e9) / 1e9);
    }

    private static long wait(List<KvSend> sends) throws Exception {
        long bytes = 0;
        for (KvSend s : sends) bytes += s.done().get(120, TimeUnit.SECONDS).bytes();
        return bytes;
    }

    /**
     * Layers marked ready one by one; how long after the last one it is usable on decode: for the host (the request's
     * {@code done()}), and on the LSA kernel path also for decode's stream (a marker after its device-side wait).
     */
    private void streaming(KvSender sender, int tokens, int repeats, long gapMicros, Random random) throws Exception {
        KvLayout layout = sender.pool().layout();
        double[] us = new double[repeats];
        double[] deviceUs = new double[repeats];
        boolean signalled = false;
        for (int r = -WARM_UP; r < repeats; r++) {
            String name = "stream-" + rank + "-" + tokens + "-" + r;
            List<KvSend> sends = send(sender, name, tokens, r, randomBlocks(random, layout.blocksFor(tokens), layout.blocks()));
            long lastReady = 0;
            for (int l = 0; l < LAYERS; l++) {
                long until = System.nanoTime() + gapMicros * 1000;
                while (System.nanoTime() < until) Thread.onSpinWait(); // the model computing layer l
                lastReady = System.nanoTime();
                for (KvSend s : sends) s.ready(l);
            }
            long usable = 0;
            long onDevice = 0;
            for (KvSend s : sends) {
                signalled = s.done().get(120, TimeUnit.SECONDS).path() == KvPathKind.LSA_KERNEL;
                String key = s.request().name();
                usable = Math.max(usable, published(store, "kvbench/" + key));
                if (signalled) onDevice = Math.max(onDevice, published(store, "kvbench-device/" + key));
            }
            if (r >= 0) {
                us[r] = (usable - lastReady) / 1e3;
                deviceUs[r] = (onDevice - lastReady) / 1e3;
            }
        }
        System.out.printf("median streaming rank %d, %d tokens, layers %d us apart: last layer ready -> usable on decode"
                + " %s%n", rank, tokens, gapMicros, medianAndP90(us));
        if (signalled) {
            System.out.printf("median streaming rank %d, %d tokens, layers %d us apart: last layer ready -> decode's stream"
                    + " past its device-side wait %s%n", rank, tokens, gapMicros, medianAndP90(deviceUs));
        }
    }

    private static String medianAndP90(double[] us) {
        double[] sorted = us.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return String.format("%.1f us (p90 %.1f)", sorted[n / 2], sorted[Math.min(n - 1, (int) (n * 0.9))]);
    }

    private static int[] randomBlocks(Random random, int count, int poolBlocks) {
        List<Integer> all = new ArrayList<>();
        for (int b = 0; b < poolBlocks; b++) all.add(b);
        Collections.shuffle(all, random);
        return all.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
    }
}
