package org.jccl.examples.bench;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
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
 * KV-cache transfer throughput and latency, one process per GPU under jccl's launcher (rank 0 prefill, rank 1 decode),
 * with the model and method of {@code examples/bench/raw_kv_bench.c}, to be run in one sitting beside it:
 * Llama-3-8B's KV cache (32 layers, K and V, 8 KV heads, head dim 128, bf16, 16-token blocks), random block tables on
 * both sides.
 *
 * <pre>
 *   launcher --nproc 2 -- org.jccl.examples.bench.KvBench [tokens,..] [repeats] [path] [gap-us]
 * </pre>
 * For each prompt length: {@code repeats} requests one after the other, every layer ready at once; the time is the
 * sender's, from the first layer's copy being issued to decode's word that every layer is usable. With {@code gap-us}
 * above 0, a second series marks the layers ready one by one, {@code gap-us} apart (a model computing them), and
 * reports how long after the last layer was marked ready it was usable on decode. Without the launcher the two ranks
 * are two GPUs (or host ranks) of this process.
 */
public final class KvBench {
    private static final int LAYERS = 32;
    private static final int TOKENS_PER_BLOCK = 16;

    private KvBench() {
    }

    static KvLayout layout(int blocks) {
        return KvLayout.builder().layers(LAYERS).tensors(2).blocks(blocks).tokensPerBlock(TOKENS_PER_BLOCK).kvHeads(8)
                .headDim(128).type(DataType.BFLOAT16).build();
    }

    public static void main(String[] args) throws Exception {
        int[] tokens = Arrays.stream((args.length > 0 ? args[0] : "1024,4096,16384").split(",")).mapToInt(Integer::parseInt).toArray();
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        KvPathKind path = args.length > 2 ? KvPathKind.valueOf(args[2]) : KvPathKind.AUTO;
        long gapMicros = args.length > 3 ? Long.parseLong(args[3]) : 0;
        int maxTokens = Arrays.stream(tokens).max().orElseThrow();
        KvLayout layout = layout(2 * maxTokens / TOKENS_PER_BLOCK);
        long staging = 64L << 20;
        if (System.getenv("RANK") == null && System.getenv("JCCL_RANK") == null) { // not under a launcher
            inProcess(layout, staging, tokens, repeats, path, gapMicros);
            return;
        }
        Backend backend = Jccl.backend();
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("kvbench-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, 2, rdzv.rank(), device).get(120, TimeUnit.SECONDS);
            KvPool pool = KvPool.allocate(comm, layout, staging).get(300, TimeUnit.SECONDS);
            KvOptions options = KvOptions.builder().path(path).rendezvous(rdzv.client()).build();
            if (rdzv.rank() == 1) {
                KvReceiver receiver = decode(pool, options, rdzv.client());
                rdzv.barrierNow("kvbench-receiving");
                rdzv.barrierNow("kvbench-done");
                receiver.close();
            } else {
                rdzv.barrierNow("kvbench-receiving");
                KvSender sender = KvSender.open(pool, options);
                prefill(sender, 1, tokens, repeats, gapMicros, rdzv.client());
                sender.close();
                rdzv.barrierNow("kvbench-done");
            }
            pool.close();
            comm.close();
        }
    }

    /** Both ranks in this process: two GPUs when there are, else host ranks. */
    private static void inProcess(KvLayout layout, long staging, int[] tokens, int repeats, KvPathKind path, long gapMicros)
            throws Exception {
        Backend backend = Jccl.backend();
        int ranks = backend.kind() == BackendKind.HOST ? 2 : Math.min(2, backend.deviceCount());
        List<Communicator> comms = backend.initAll(ranks).get(120, TimeUnit.SECONDS);
        List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
        for (Communicator c : comms) allocating.add(KvPool.allocate(c, layout, staging));
        List<KvPool> pools = new ArrayList<>();
        for (CompletableFuture<KvPool> f : allocating) pools.add(f.get(300, TimeUnit.SECONDS));
        KvOptions options = KvOptions.builder().path(path).build();
        KvReceiver receiver = decode(pools.get(ranks - 1), options, null);
        KvSender sender = KvSender.open(pools.get(0), options);
        prefill(sender, ranks - 1, tokens, repeats, gapMicros, null);
        sender.close();
        receiver.close();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (KvPool p : pools) closing.add(p.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        comms.forEach(Communicator::close);
    }

    /**
     * The decode rank: takes every request into blocks of a pool allocator, frees them as soon as they are usable, and
     * publishes when each request's last layer became usable (for the streaming series).
     */
    private static KvReceiver decode(KvPool pool, KvOptions options, RendezvousClient store) throws Exception {
        KvBlockPool blocks = new KvBlockPool(pool.layout().blocks());
        return KvReceiver.open(pool, blocks, options, incoming -> incoming.done().thenAccept(received -> {
            long usable = System.nanoTime(); // one clock for every process of this host
            blocks.free(received.blocks());
            if (store != null) {
                store.set("kvbench/" + received.request(), Long.toString(usable).getBytes(StandardCharsets.UTF_8));
            } else {
                LAST_USABLE.put(received.request(), usable);
            }
        })).get(60, TimeUnit.SECONDS);
    }

    private static final java.util.Map<String, Long> LAST_USABLE = new java.util.concurrent.ConcurrentHashMap<>();

    private static void prefill(KvSender sender, int decodeRank, int[] tokens, int repeats, long gapMicros,
                                RendezvousClient store) throws Exception {
        KvLayout layout = sender.pool().layout();
        System.out.println("# " + sender.pool().communicator().backend().describe());
        System.out.println("# mode     tokens      bytes        ms      GB/s  path");
        Random random = new Random(42);
        for (int t : tokens) {
            int blocks = layout.blocksFor(t);
            double[] ms = new double[repeats];
            String usedPath = "";
            for (int r = -1; r < repeats; r++) { // r = -1 warms up
                int[] source = randomBlocks(random, blocks, layout.blocks());
                KvSend send = sender.send(new KvRequest("whole-" + t + "-" + r, decodeRank, t, source, Duration.ofSeconds(60)));
                send.allReady();
                KvDelivered d = send.done().get(120, TimeUnit.SECONDS);
                usedPath = d.path().name();
                if (r < 0) continue;
                ms[r] = d.transferNanos() / 1e6;
                System.out.printf("whole   %7d %10d %9.3f %9.1f  %s%n", t, d.bytes(), ms[r], d.bytesPerSecond() / 1e9, d.path());
            }
            Arrays.sort(ms);
            long bytes = (long) LAYERS * 2 * blocks * layout.blockBytes();
            System.out.printf("median whole %d tokens: %.3f ms, %.1f GB/s (%s)%n", t, ms[repeats / 2],
                    bytes / ms[repeats / 2] / 1e6, usedPath);
            if (gapMicros > 0) streaming(sender, decodeRank, t, repeats, gapMicros, store, random);
        }
    }

    /** Layers marked ready one by one; how long after the last one it is usable on decode. */
    private static void streaming(KvSender sender, int decodeRank, int tokens, int repeats, long gapMicros,
                                  RendezvousClient store, Random random) throws Exception {
        KvLayout layout = sender.pool().layout();
        double[] us = new double[repeats];
        for (int r = -1; r < repeats; r++) {
            String name = "stream-" + tokens + "-" + r;
            KvSend send = sender.send(new KvRequest(name, decodeRank, tokens,
                    randomBlocks(random, layout.blocksFor(tokens), layout.blocks()), Duration.ofSeconds(60)));
            long lastReady = 0;
            for (int l = 0; l < LAYERS; l++) {
                long until = System.nanoTime() + gapMicros * 1000;
                while (System.nanoTime() < until) Thread.onSpinWait(); // the model computing layer l
                lastReady = System.nanoTime();
                send.ready(l);
            }
            send.done().get(120, TimeUnit.SECONDS);
            long usable = store != null ? Long.parseLong(new String(store.getNow("kvbench/" + name, Duration.ofSeconds(30)),
                    StandardCharsets.UTF_8)) : LAST_USABLE.get(name);
            if (r >= 0) us[r] = (usable - lastReady) / 1e3;
        }
        Arrays.sort(us);
        System.out.printf("median streaming %d tokens, layers %d us apart: last layer ready -> usable on decode %.1f us"
                + " (p90 %.1f)%n", tokens, gapMicros, us[repeats / 2], us[(int) (repeats * 0.9)]);
    }

    private static int[] randomBlocks(Random random, int count, int poolBlocks) {
        List<Integer> all = new ArrayList<>();
        for (int b = 0; b < poolBlocks; b++) all.add(b);
        java.util.Collections.shuffle(all, random);
        return all.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
    }
}
