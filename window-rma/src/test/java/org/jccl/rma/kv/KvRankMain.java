package org.jccl.rma.kv;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.error.JcclException;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * A rank of {@link KvAcrossProcessesTest}'s two-process jobs on the host backend over TCP: rank 0 prefills, rank 1
 * decodes, and their KV link is a TCP connection found through the rendezvous store. Modes:
 * <ul>
 *   <li>{@code deliver PATH}: one request of seeded bytes and a seeded block table; decode checks every byte it got;</li>
 *   <li>{@code producer-dies}: prefill sends {@link #REQUESTS} requests, readies only their first layer (the model
 *       computes the rest slowly) and waits to be killed; decode reports how each request ended and when, whether its
 *       blocks came back, whether its communicator works or fails typed, and the KV threads left;</li>
 *   <li>{@code decode-dies}: the same, the other way round.</li>
 * </ul>
 * The rank that is not killed exits 0 when everything ended as it reports; nothing it waits for waits forever.
 */
public final class KvRankMain {
    static final KvLayout LAYOUT = KvRig.small().build();
    static final int REQUESTS = 3;
    static final int TOKENS = 13;
    static final long SEED = 42;
    private static final int PREFILL = 0;
    private static final int DECODE = 1;
    private static final long WAIT_SECONDS = 60;

    private KvRankMain() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        KvPathKind path = args.length > 1 ? KvPathKind.valueOf(args[1]) : KvPathKind.AUTO;
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("kv-id", host::newUniqueId);
            Communicator comm = host.initRank(id, 2, rdzv.rank(), -1).get(WAIT_SECONDS, TimeUnit.SECONDS);
            KvPool pool = KvPool.allocate(comm, LAYOUT, 1024).get(WAIT_SECONDS, TimeUnit.SECONDS);
            KvOptions options = KvOptions.builder().path(path).rendezvous(rdzv.client()).build();
            boolean prefill = rdzv.rank() == PREFILL;
            if (prefill) KvRig.fill(pool, SEED);
            else KvRig.zero(pool);
            switch (mode) {
                case "deliver" -> {
                    if (prefill) deliver(rdzv, pool, options);
                    else checkWhatArrives(rdzv, pool, options);
                    rdzv.barrierNow("kv-done");
                }
                case "producer-dies" -> {
                    if (prefill) sendFirstLayersAndAwaitTheKill(rdzv, pool, options);
                    else receiveUntilTheProducerDies(rdzv, comm, pool, options);
                }
                case "decode-dies" -> {
                    if (prefill) sendUntilTheDecoderDies(rdzv, comm, pool, options);
                    else receiveFirstLayersAndAwaitTheKill(rdzv, pool, options);
                }
                default -> throw new IllegalArgumentException("no mode " + mode);
            }
            closeAll(pool, comm);
        }
        System.out.println("kv threads left: " + threadsLeft("jccl-kv-"));
    }

    private static int[] sourceBlocks() {
        return KvRig.randomBlocks(new Random(SEED), LAYOUT.blocksFor(TOKENS), LAYOUT.blocks());
    }

    // ---- deliver

    private static void deliver(Rendezvous rdzv, KvPool pool, KvOptions options) throws Exception {
        rdzv.barrierNow("kv-receiving");
        try (KvSender sender = KvSender.open(pool, options)) {
            KvDelivered d = sender.send(new KvRequest("across", DECODE, TOKENS, sourceBlocks(), Duration.ofSeconds(WAIT_SECONDS)))
                    .allReady().done().get(WAIT_SECONDS, TimeUnit.SECONDS);
            System.out.println("delivered " + d.bytes() + " bytes by " + d.path());
        }
    }

    private static void checkWhatArrives(Rendezvous rdzv, KvPool pool, KvOptions options) throws Exception {
        CompletableFuture<KvIncoming> first = new CompletableFuture<>();
        KvReceiver receiver = KvReceiver.open(pool, new KvBlockPool(LAYOUT.blocks()), options, first::complete)
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        try {
            rdzv.barrierNow("kv-receiving");
            KvReceived r = first.get(WAIT_SECONDS, TimeUnit.SECONDS).done().get(WAIT_SECONDS, TimeUnit.SECONDS);
            long wrong = KvRig.wrongBytes(LAYOUT, KvRig.seeded(LAYOUT, SEED), sourceBlocks(), LAYOUT, KvRig.bytes(pool), r.blocks(), TOKENS);
            System.out.println("arrived " + r.bytes() + " bytes of " + r.request() + " from rank " + r.sender() + ", wrong bytes " + wrong);
        } finally {
            receiver.close();
        }
    }

    // ---- one side dies

    private static List<KvSend> sendFirstLayers(KvSender sender) {
        List<KvSend> sends = new CopyOnWriteArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            // A deadline far beyond the test: only the peer's loss can end these requests.
            sends.add(sender.send(new KvRequest("inflight-" + i, DECODE, TOKENS, sourceBlocks(), Duration.ofMinutes(10))).ready(0));
        }
        return sends;
    }

    private static KvReceiver receiveFirstLayers(Rendezvous rdzv, KvPool pool, KvOptions options, KvBlockPool blocks,
                                                 List<KvIncoming> arrived) throws Exception {
        CountDownLatch firstLayers = new CountDownLatch(REQUESTS);
        KvReceiver receiver = KvReceiver.open(pool, blocks, options, in -> {
            arrived.add(in);
            in.layer(0).thenRun(firstLayers::countDown);
        }).get(WAIT_SECONDS, TimeUnit.SECONDS);
        rdzv.barrierNow("kv-receiving");
        if (!firstLayers.await(WAIT_SECONDS, TimeUnit.SECONDS)) throw new IllegalStateException("the first layers never arrived");
        System.out.println("in flight: " + arrived.size() + " requests with layer 0 usable");
        return receiver;
    }

    private static void sendFirstLayersAndAwaitTheKill(Rendezvous rdzv, KvPool pool, KvOptions options) throws Exception {
        rdzv.barrierNow("kv-receiving");
        KvSender sender = KvSender.open(pool, options);
        sendFirstLayers(sender);
        awaitTheKill();
    }

    private static void receiveFirstLayersAndAwaitTheKill(Rendezvous rdzv, KvPool pool, KvOptions options) throws Exception {
        receiveFirstLayers(rdzv, pool, options, new KvBlockPool(LAYOUT.blocks()), new CopyOnWriteArrayList<>());
        awaitTheKill();
    }

    /** The killed rank's end: the test kills it while it waits here, its requests in flight. */
    private static void awaitTheKill() throws InterruptedException {
        new CountDownLatch(1).await(WAIT_SECONDS, TimeUnit.SECONDS);
        System.out.println("never killed");
        System.exit(3);
    }

    private static void receiveUntilTheProducerDies(Rendezvous rdzv, Communicator comm, KvPool pool, KvOptions options)
            throws Exception {
        KvBlockPool blocks = new KvBlockPool(LAYOUT.blocks());
        List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
        KvReceiver receiver = receiveFirstLayers(rdzv, pool, options, blocks, arrived);
        try {
            for (KvIncoming in : arrived) in.done().whenComplete((r, e) -> reportEnd(in.request(), e));
            for (KvIncoming in : arrived) in.done().handle((r, e) -> null).get(WAIT_SECONDS, TimeUnit.SECONDS);
            // The receiver gives a failed request's blocks back once nothing of it is in flight: at once here.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> blocks.available() == blocks.capacity());
            System.out.println("blocks free: " + blocks.available() + " of " + blocks.capacity());
            reportTheCommunicator(comm);
        } finally {
            receiver.close();
        }
        System.out.println("receiver closed");
    }

    private static void sendUntilTheDecoderDies(Rendezvous rdzv, Communicator comm, KvPool pool, KvOptions options) throws Exception {
        rdzv.barrierNow("kv-receiving");
        try (KvSender sender = KvSender.open(pool, options)) {
            List<KvSend> sends = sendFirstLayers(sender);
            for (KvSend s : sends) s.done().whenComplete((d, e) -> reportEnd(s.request().name(), e));
            for (KvSend s : sends) s.done().handle((d, e) -> null).get(WAIT_SECONDS, TimeUnit.SECONDS);
            reportTheCommunicator(comm);
        }
        System.out.println("sender closed");
    }

    private static void reportEnd(String request, Throwable failure) {
        Throwable error = failure instanceof java.util.concurrent.CompletionException c && c.getCause() != null ? c.getCause() : failure;
        if (error == null) System.out.println("request " + request + " ended: delivered");
        else if (error instanceof KvTransferException e) {
            System.out.println("request " + request + " ended: KvTransferException " + e.failure() + ": " + e.getMessage());
        } else {
            System.out.println("request " + request + " ended: untyped " + error);
        }
    }

    /** An all-reduce with the dead peer: it must end, failed typed (or, were the peer not needed, done). */
    private static void reportTheCommunicator(Communicator comm) throws InterruptedException {
        try (Buffer b = comm.backend().allocate(comm.device(), 4)) {
            comm.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM).get(WAIT_SECONDS, TimeUnit.SECONDS);
            System.out.println("communicator: works");
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            System.out.println("communicator: " + (cause instanceof JcclException ? "failed typed with " : "failed untyped with ")
                    + cause.getClass().getSimpleName() + ": " + cause.getMessage());
        } catch (java.util.concurrent.TimeoutException e) {
            System.out.println("communicator: hangs");
        }
    }

    private static void closeAll(KvPool pool, Communicator comm) {
        try {
            pool.closeAsync().get(WAIT_SECONDS, TimeUnit.SECONDS); // collective: with a dead peer it ends failed or not
        } catch (Exception e) {
            System.out.println("pool close: " + e);
        }
        comm.close();
    }

    /** Threads named {@code prefix}… still alive after giving each a few seconds to end (the KV timer's idle time). */
    static long threadsLeft(String prefix) throws InterruptedException {
        List<Thread> kv = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).toList();
        for (Thread t : kv) t.join(TimeUnit.SECONDS.toMillis(5));
        return kv.stream().filter(Thread::isAlive).count();
    }
}
