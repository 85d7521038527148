package org.jccl.examples.kvcache;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvDelivered;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvSend;
import org.jccl.rma.kv.KvSender;

/**
 * A prefill rank: computes its requests in batches, layer by layer as a model does (layer l of every request of the
 * batch, then layer l + 1), and marks each layer of each request ready as soon as its fill is issued, so that layer l
 * moves while later layers are computed. A request's source blocks come from this rank's own block pool and go back
 * when every decode rank has it; when the pool is full, the next batch waits for the oldest request, so a decode that
 * grants blocks slowly slows prefill down.
 */
final class PrefillRank {
    private final PipelineOptions options;
    private final int rank;
    private final KvSender sender;
    private final KvModel model;
    private final Consumer<String> out;
    private final KvBlockPool sourceBlocks;
    private final Random random;
    private final TransferStats stats = new TransferStats();

    /** One request being computed and sent: its blocks, and what has to end before they can be reused. */
    private record InFlight(KvModel.Placed placed, List<KvSend> sends, CompletableFuture<Void> released) {
    }

    PrefillRank(PipelineOptions options, int rank, KvSender sender, KvModel model, Consumer<String> out) {
        this.options = options;
        this.rank = rank;
        this.sender = sender;
        this.model = model;
        this.out = out;
        this.random = new Random(options.seed() + rank);
        this.sourceBlocks = BlockTables.scattered(sender.pool().layout().blocks(), random);
    }

    /** Sends every request of this rank; true when each reached every decode rank. */
    boolean run() throws Exception {
        KvLayout layout = sender.pool().layout();
        ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int first = 0; first < options.requests(); first += options.batch()) {
            List<InFlight> batch = new ArrayList<>();
            for (int i = first; i < Math.min(options.requests(), first + options.batch()); i++) {
                long id = (long) rank * options.requests() + i; // unique across prefill ranks: the pattern tells them apart
                int tokens = options.minTokens() + random.nextInt(options.maxTokens() - options.minTokens() + 1);
                int[] blocks = sourceBlocksFor(layout.blocksFor(tokens), inFlight);
                InFlight r = start(id, tokens, blocks);
                batch.add(r);
                inFlight.add(r);
                all.add(r.released());
            }
            for (int layer = 0; layer < layout.layers(); layer++) {
                for (InFlight r : batch) {
                    CompletableFuture<Void> computed = r.placed().computeLayer(layer);
                    computed.exceptionally(e -> { // the layer was not written: its request must not count as delivered
                        r.sends().forEach(KvSend::cancel);
                        return null;
                    });
                    for (KvSend s : r.sends()) s.ready(layer);
                }
            }
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]))
                .get(options.deadline().toSeconds() * options.requests() + 60, TimeUnit.SECONDS);
        out.accept(stats.prefillSummary(rank, options));
        return stats.failed() == 0;
    }

    /** Sends request {@code id} to its decode rank(s); its blocks go back to the pool once every send ended. */
    private InFlight start(long id, int tokens, int[] blocks) {
        stats.started();
        KvModel.Placed placed = model.place(id, tokens, blocks);
        String name = "req-" + id;
        List<KvSend> sends = new ArrayList<>();
        List<CompletableFuture<Void>> reported = new ArrayList<>();
        for (int d = options.prefills(); d < options.ranks(); d++) { // with several decode ranks, each takes its heads
            int decode = d;
            KvSend send = sender.send(new KvRequest(name, decode, tokens, blocks, options.deadline()));
            sends.add(send);
            // Reported off the sender's own thread: printing is the application's work, not the transfer's.
            reported.add(send.done().handleAsync((delivered, error) -> {
                report(name, decode, tokens, delivered, error);
                return null;
            }));
        }
        CompletableFuture<Void> released = CompletableFuture.allOf(reported.toArray(new CompletableFuture<?>[0]))
                .thenRun(() -> sourceBlocks.free(blocks)); // nothing reads them any more: every send ended
        return new InFlight(placed, sends, released);
    }

    /**
     * The source blocks of a request: free ones, else those of the oldest requests in flight once they are delivered.
     * The pool holds two batches of the longest prompt, so the requests waited for are always of earlier batches, whose
     * layers are all computed: never of the batch being started.
     */
    private int[] sourceBlocksFor(int count, ArrayDeque<InFlight> inFlight) throws Exception {
        int[] blocks = sourceBlocks.allocate(count);
        while (blocks == null) {
            InFlight oldest = inFlight.poll();
            if (oldest == null) throw new IllegalStateException("the prefill pool cannot hold " + count + " blocks");
            oldest.released().get(options.deadline().toSeconds() + 60, TimeUnit.SECONDS);
            blocks = sourceBlocks.allocate(count);
        }
        return blocks;
    }

    private void report(String name, int decode, int tokens, KvDelivered d, Throwable error) {
        if (error != null) {
            stats.fail();
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            out.accept(name + " -> rank " + decode + " FAILED: " + cause);
            return;
        }
        stats.add(d.bytes(), d.transferNanos(), d.waitedNanos());
        out.accept(String.format(Locale.ROOT, "%s -> rank %d: %d tokens, %s over %s in %.3f ms (%s), waited %.1f ms for decode blocks",
                name, decode, tokens, TransferStats.size(d.bytes()), d.path(), d.transferNanos() / 1e6,
                TransferStats.rate(d.bytesPerSecond()), d.waitedNanos() / 1e6));
    }
}
