package org.jccl.examples.kvcache;

import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvReceived;
import org.jccl.rma.kv.KvReceiver;
import org.jspecify.annotations.Nullable;

/**
 * A decode rank: takes requests into blocks of its own pool (scattered ids, granted only while it has free ones), checks
 * every byte of each request once it is usable, "generates" with it for {@code --decode-hold-ms} and then frees its
 * blocks. While blocks are held, later requests wait for a grant, and so do the prefill ranks sending them: the
 * backpressure prefill reports as time waited.
 */
final class DecodeRank implements AutoCloseable {
    private final int rank;
    private final int expected;
    private final KvModel model;
    private final Consumer<String> out;
    private final KvBlockPool blocks;
    private final KvReceiver receiver;
    private final TransferStats stats = new TransferStats();
    private final AtomicInteger ended = new AtomicInteger();
    private final CompletableFuture<Void> allEnded = new CompletableFuture<>();
    /** Checks and holds run here: never on the receiver's thread, which must not block, nor on jccl's event thread. */
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kv-decode-worker");
        t.setDaemon(true);
        return t;
    });
    private final long holdMillis;

    private DecodeRank(PipelineOptions options, KvPool pool, KvModel model, KvOptions kvOptions, Consumer<String> out)
            throws Exception {
        this.rank = pool.communicator().rank();
        this.expected = options.requestsPerDecodeRank();
        this.model = model;
        this.out = out;
        this.holdMillis = options.decodeHold().toMillis();
        this.blocks = BlockTables.scattered(pool.layout().blocks(), new Random(options.seed() + rank));
        this.receiver = KvReceiver.open(pool, blocks, kvOptions, this::arrived).get(60, TimeUnit.SECONDS);
    }

    /** A decode rank receiving from now on. */
    static DecodeRank open(PipelineOptions options, KvPool pool, KvModel model, KvOptions kvOptions, Consumer<String> out)
            throws Exception {
        return new DecodeRank(options, pool, model, kvOptions, out);
    }

    /** A request was granted blocks (on the receiver's thread: only hands it on). */
    private void arrived(KvIncoming incoming) {
        stats.started();
        @Nullable CompletableFuture<Long> early = checkAsTheyLand(incoming);
        incoming.done().whenCompleteAsync((received, error) -> {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                out.accept(incoming.request() + " <- rank " + incoming.sender() + " FAILED: " + cause);
                stats.fail();
                ended();
            } else {
                check(incoming, received, early);
            }
        }, worker);
    }

    /** On GPUs, where the layers are signalled on the device, decode checks each one as it lands; else null. */
    private @Nullable CompletableFuture<Long> checkAsTheyLand(KvIncoming incoming) {
        if (!incoming.signalsLayersOnDevice() || !(model instanceof GpuKvModel gpu)) return null;
        try {
            return gpu.checkAsLayersLand(requestId(incoming.request()), incoming);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The prefill ranks name requests req-<id>; the id is the pattern's request coordinate. */
    private static long requestId(String name) {
        return Long.parseLong(name.substring("req-".length()));
    }

    /**
     * Checks every byte of a usable request (or takes the check made as its layers landed), then holds its blocks for a
     * while before giving them back.
     */
    private void check(KvIncoming incoming, KvReceived received, @Nullable CompletableFuture<Long> checkedAsTheyLand) {
        CompletableFuture<Long> checked = checkedAsTheyLand;
        if (checked == null) {
            try {
                checked = model.place(requestId(received.request()), incoming.tokens(), received.blocks()).wrongBytes();
            } catch (RuntimeException e) {
                checked = CompletableFuture.failedFuture(e);
            }
        }
        checked.whenCompleteAsync((wrong, error) -> {
            if (error != null) {
                out.accept(received.request() + " <- rank " + received.sender() + ": the check FAILED: " + error);
                stats.fail();
            } else {
                stats.add(received.bytes(), received.transferNanos(), 0);
                stats.addWrong(wrong);
                out.accept(String.format(Locale.ROOT, "%s <- rank %d: %d tokens in %d blocks, %s usable %.3f ms after the"
                        + " grant (%s), %d wrong bytes%s", received.request(), received.sender(), incoming.tokens(),
                        received.blocks().length, TransferStats.size(received.bytes()), received.transferNanos() / 1e6,
                        TransferStats.rate(received.transferNanos() == 0 ? 0 : received.bytes() * 1e9 / received.transferNanos()),
                        wrong, checkedAsTheyLand != null ? " (checked layer by layer as each landed)" : ""));
            }
            // Decode "generates" with the request's KV cache, then frees it: only then can a waiting request be granted.
            worker.schedule(() -> {
                blocks.free(received.blocks());
                ended();
            }, holdMillis, TimeUnit.MILLISECONDS);
        }, worker);
    }

    private void ended() {
        if (ended.incrementAndGet() == expected) allEnded.complete(null);
    }

    /** Waits until every expected request was received (or failed) and freed; true when all arrived intact. */
    boolean awaitAll(long seconds) throws Exception {
        try {
            allEnded.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            out.accept("only " + ended.get() + " of " + expected + " requests arrived within " + seconds + " s");
            stats.fail();
        }
        out.accept(stats.decodeSummary(rank, expected));
        return stats.failed() == 0 && stats.wrongBytes() == 0;
    }

    /** Closes the receiver (its links) and the worker; the pool and the model are the caller's. */
    @Override
    public void close() throws Exception {
        receiver.closeAsync().get(30, TimeUnit.SECONDS);
        worker.shutdownNow();
    }
}
