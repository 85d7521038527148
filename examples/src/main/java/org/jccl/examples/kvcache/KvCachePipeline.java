package org.jccl.examples.kvcache;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvSender;
import org.jspecify.annotations.Nullable;

/**
 * A model-shaped prefill → decode pipeline on jccl's paged KV-cache transfer ({@code org.jccl.rma.kv}). Prefill ranks
 * hold a paged KV pool ({@code [blocks, tokens per block, KV heads, head dim]} per layer, K and V, bf16) on their GPU;
 * they "compute" their requests in batches, layer by layer, a kernel writing each layer's blocks with a pattern of
 * (request, layer, tensor, token, head, offset) ({@link KvBlocks}), and mark each layer ready as soon as it is
 * issued, so that it moves while the next layers are computed. Decode ranks grant blocks of their own pool (other block
 * sizes, or their share of the heads, if asked), check every byte of each request with a kernel once it is usable,
 * hold its blocks while "generating" and free them. Every rank prints each transfer (time from the first layer sent to
 * the last layer usable, GB/s, and how long prefill waited for decode to grant blocks) and a summary; the job exits 1
 * if a request failed or a byte was wrong.
 *
 * <pre>
 *   java -cp ... org.jccl.core.launch.Launcher --nproc 2 -- org.jccl.examples.kvcache.KvCachePipeline [options]
 * </pre>
 * One process per rank under jccl's launcher ({@code --nproc} = prefill + decode ranks), each on its local GPU, or on
 * the host backend with a small model where there is none. Without the launcher every rank runs in this process (one
 * thread and one GPU each). {@code --help} lists the options.
 */
public final class KvCachePipeline {
    /** Setting up (communicators, pools, kernels) and the barriers between ranks. */
    private static final long SETUP_SECONDS = 300;

    private KvCachePipeline() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the pipeline; 0 when every request arrived intact (or for --help), 1 when not, 2 for a command line it cannot run. */
    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Backend backend = Jccl.backend();
        PipelineOptions options;
        try {
            options = PipelineOptions.parse(args, backend.kind() != BackendKind.HOST);
        } catch (IllegalArgumentException e) {
            if (e.getMessage().isEmpty()) { // --help
                out.print(PipelineOptions.USAGE);
                return 0;
            }
            err.println("KvCachePipeline: " + e.getMessage());
            err.print(PipelineOptions.USAGE);
            return 2;
        }
        boolean launched = System.getenv("RANK") != null || System.getenv("JCCL_RANK") != null;
        return launched ? launched(backend, options, out, err) : inProcess(backend, options, out, err);
    }

    /** This process is one rank of a launched job: it joins the others through the launcher's rendezvous. */
    private static int launched(Backend backend, PipelineOptions options, PrintStream out, PrintStream err) throws Exception {
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            if (rdzv.worldSize() != options.ranks()) {
                err.println("KvCachePipeline: " + options.prefills() + "P" + options.decodes() + "D needs " + options.ranks()
                        + " ranks (launcher --nproc " + options.ranks() + "), not " + rdzv.worldSize());
                return 2;
            }
            UniqueId id = rdzv.shareUniqueIdNow("kvcache-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            try {
                Communicator comm = backend.initRank(id, options.ranks(), rdzv.rank(), device).get(SETUP_SECONDS, TimeUnit.SECONDS);
                return runRank(options, comm, rdzv.client(), rdzv::barrierNow, out::println);
            } catch (Exception e) {
                out.println("failed: " + cause(e)); // the launcher stops the other ranks
                return 1;
            }
        }
    }

    /** Every rank in this process, one thread each (one GPU each on GPU backends). */
    private static int inProcess(Backend backend, PipelineOptions options, PrintStream out, PrintStream err) throws Exception {
        if (backend.kind() != BackendKind.HOST && backend.deviceCount() < options.ranks()) {
            err.println("KvCachePipeline: " + options.ranks() + " ranks in one process need " + options.ranks() + " GPUs, this"
                    + " machine has " + backend.deviceCount() + ": run one process per rank under jccl's launcher");
            return 2;
        }
        List<Communicator> comms = backend.initAll(options.ranks()).get(SETUP_SECONDS, TimeUnit.SECONDS);
        CyclicBarrier barrier = new CyclicBarrier(options.ranks());
        List<CompletableFuture<Integer>> ranks = new ArrayList<>();
        for (Communicator comm : comms) {
            CompletableFuture<Integer> code = new CompletableFuture<>();
            Consumer<String> prefixed = line -> out.println("[rank " + comm.rank() + "] " + line); // as the launcher does
            Thread t = new Thread(() -> {
                try {
                    code.complete(runRank(options, comm, null, name -> await(barrier), prefixed));
                } catch (Exception | Error e) {
                    prefixed.accept("failed: " + cause(e));
                    barrier.reset(); // the other ranks stop waiting for this one
                    code.complete(1);
                }
            }, "kv-rank-" + comm.rank());
            t.start();
            ranks.add(code);
        }
        int worst = 0;
        for (CompletableFuture<Integer> code : ranks) worst = Math.max(worst, code.join());
        return worst;
    }

    /** What went wrong, without the wrappers of futures. */
    private static Throwable cause(Throwable e) {
        Throwable t = e;
        while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) t = t.getCause();
        return t;
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(SETUP_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the other ranks", e);
        } catch (BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("another rank failed or did not come", e);
        }
    }

    /** Waits until every rank has reached the point {@code name}. */
    @FunctionalInterface
    private interface Barrier {
        void await(String name);
    }

    /** One rank from its pool to its summary; closes everything it made, the communicator last. */
    private static int runRank(PipelineOptions options, Communicator comm, @Nullable RendezvousClient rendezvous,
                               Barrier barrier, Consumer<String> out) throws Exception {
        int rank = comm.rank();
        boolean prefill = options.isPrefill(rank);
        KvLayout layout = prefill ? options.prefillLayout() : options.decodeLayout(rank - options.prefills());
        if (rank == 0) out.accept("KV-cache pipeline on " + comm.backend().describe() + ": " + options.describe());
        KvPool pool = KvPool.allocate(comm, layout, stagingBytes(options)).get(SETUP_SECONDS, TimeUnit.SECONDS);
        out.accept((prefill ? "prefill" : "decode") + " rank " + rank + " on " + comm.describe() + ": pool of "
                + layout.blocks() + " blocks of " + layout.tokensPerBlock() + " tokens, heads " + layout.headOffset() + ".."
                + (layout.headOffset() + layout.kvHeads() - 1) + ", " + TransferStats.size(layout.poolBytes()));
        KvOptions kv = KvOptions.builder().path(options.path()).rendezvous(rendezvous).build();
        int prompts = prefill ? options.requests() : options.requestsPerDecodeRank();
        boolean intact;
        try (KvModel model = KvModel.of(pool, prompts, layout.blocksFor(options.maxTokens()))) {
            if (prefill) {
                barrier.await("kvcache-receiving"); // every decode rank listens
                KvSender sender = KvSender.open(pool, kv);
                intact = new PrefillRank(options, rank, sender, model, out).run();
                barrier.await("kvcache-done");
                sender.closeAsync().get(SETUP_SECONDS, TimeUnit.SECONDS);
            } else {
                try (DecodeRank decode = DecodeRank.open(options, pool, model, kv, out)) {
                    barrier.await("kvcache-receiving");
                    intact = decode.awaitAll(options.deadline().toSeconds() * prompts + 60);
                    barrier.await("kvcache-done");
                }
            }
        }
        pool.closeAsync().get(SETUP_SECONDS, TimeUnit.SECONDS); // collective: every rank closes its pool
        comm.close();
        return intact ? 0 : 1;
    }

    /**
     * The staging area the staged paths (put/signal, send/recv) pack pieces into: a few slots of one layer's tensor of
     * the longest prompt, within 64 MiB. The LSA kernel and in-process copy paths do not use it.
     */
    private static long stagingBytes(PipelineOptions options) {
        long tensorOfLongest = options.bytesPerToken() / (2L * options.layers()) * options.maxTokens();
        return Math.max(64 << 10, Math.min(64L << 20, KvOptions.DEFAULT.slots() * tensorOfLongest));
    }
}
