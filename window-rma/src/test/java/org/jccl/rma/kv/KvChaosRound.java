package org.jccl.rma.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;

/**
 * One round of {@link KvChaosTest}: 2 or 3 host ranks of one JVM (1P1D, 2P1D or 1P2D), a sender per prefill rank on a
 * random path, a receiver per decode rank with a small allocator, and random requests, every choice drawn from the
 * round's seed: when each request is sent and each layer readied (or one never is), deadlines that expire, cancels
 * from either side, and a sender or receiver closed at a random moment. The decode application checks every byte of a
 * request that arrives and then frees its blocks, as a decoder would after using them. Timing between threads is not
 * replayed; the choices are.
 */
final class KvChaosRound implements AutoCloseable {
    static final KvLayout LAYOUT = KvRig.small().build();
    private static final KvPathKind[] PATHS = {KvPathKind.COPY, KvPathKind.PUT_SIGNAL, KvPathKind.SEND_RECV};
    /** Long enough never to expire while the round runs: a request with it fails only through the chaos. */
    private static final Duration LONG_DEADLINE = Duration.ofSeconds(20);

    /** One request and the chaos planned for it; {@link #send} is null when its sender was closed before it was sent. */
    static final class Planned {
        final String name;
        final int sender;
        final int receiver;
        final int tokens;
        final int[] sourceBlocks;
        final Duration deadline;
        final boolean withheldLayer;
        final boolean cancelledBySender;
        final boolean cancelledByReceiver;
        /** How long after it arrived the decode application cancels it, when it does. */
        final long receiverCancelDelayMillis;
        /** Set once sending was tried: {@link #send} is the outcome. */
        volatile boolean attempted;
        volatile @Nullable KvSend send;
        volatile @Nullable KvIncoming incoming;

        Planned(String name, int sender, int receiver, int tokens, int[] sourceBlocks, Duration deadline, boolean withheldLayer,
                boolean cancelledBySender, boolean cancelledByReceiver, long receiverCancelDelayMillis) {
            this.name = name;
            this.sender = sender;
            this.receiver = receiver;
            this.tokens = tokens;
            this.sourceBlocks = sourceBlocks;
            this.deadline = deadline;
            this.withheldLayer = withheldLayer;
            this.cancelledBySender = cancelledBySender;
            this.cancelledByReceiver = cancelledByReceiver;
            this.receiverCancelDelayMillis = receiverCancelDelayMillis;
        }

        @Override
        public String toString() {
            return name + " (rank " + sender + " → " + receiver + ", " + tokens + " tokens, deadline " + deadline.toMillis()
                    + " ms" + (withheldLayer ? ", a layer withheld" : "") + (cancelledBySender ? ", cancelled by the sender" : "")
                    + (cancelledByReceiver ? ", cancelled by the receiver" : "") + ")";
        }
    }

    final long seed;
    final KvRig rig;
    final List<Integer> prefillRanks;
    final List<Integer> decodeRanks;
    final Map<Integer, KvSender> senders = new HashMap<>();
    final Map<Integer, KvReceiver> receivers = new HashMap<>();
    final Map<Integer, KvBlockPool> allocators = new HashMap<>();
    final List<Planned> requests = new ArrayList<>();
    /** Requests sent after the chaos, one from each sender still open to each receiver still open. */
    final List<Planned> afterChaos = new ArrayList<>();
    /** Ranks whose sender or receiver the chaos closed. */
    final Set<Integer> closedByChaos = ConcurrentHashMap.newKeySet();
    /** What the decode application found wrong in the requests that arrived, or failed to do. */
    final List<String> problems = new CopyOnWriteArrayList<>();
    private final Random random;
    private final AtomicInteger pending = new AtomicInteger();
    private final Map<String, Planned> byName = new ConcurrentHashMap<>();
    private final Map<Integer, byte[]> sources = new HashMap<>();
    private final ScheduledExecutorService chaos = Executors.newScheduledThreadPool(2, r -> new Thread(r, "kv-chaos"));
    /** The decode application: reads what arrived and frees it, off the receivers' threads (they must not block). */
    private final ExecutorService decoder = Executors.newSingleThreadExecutor(r -> new Thread(r, "kv-chaos-decoder"));
    private final String description;

    KvChaosRound(long seed) throws Exception {
        this.seed = seed;
        this.random = new Random(seed);
        int ranks = 2 + random.nextInt(2);
        boolean twoPrefill = ranks == 3 && random.nextBoolean();
        prefillRanks = twoPrefill ? List.of(0, 1) : List.of(0);
        decodeRanks = ranks == 2 ? List.of(1) : twoPrefill ? List.of(2) : List.of(1, 2);
        long staging = 256L << random.nextInt(4); // slots of 64..512 bytes: pieces of a quarter block to two blocks
        rig = new KvRig(java.util.Collections.nCopies(ranks, LAYOUT), staging);
        StringBuilder d = new StringBuilder("prefill " + prefillRanks + ", decode " + decodeRanks + ", staging " + staging);
        for (int p : prefillRanks) {
            rig.fill(p, seed + p);
            sources.put(p, rig.pool(p));
            KvPathKind path = PATHS[random.nextInt(PATHS.length)];
            senders.put(p, rig.sender(p, KvOptions.builder().path(path).slots(1 + random.nextInt(4)).build()));
            d.append(", rank ").append(p).append(" sends by ").append(path);
        }
        for (int r : decodeRanks) {
            rig.zero(r);
            KvBlockPool blocks = new KvBlockPool(4 + random.nextInt(13)); // a request takes at most 4
            allocators.put(r, blocks);
            KvOptions options = KvOptions.builder().slots(1 + random.nextInt(4))
                    .maxGrantedBlocks(random.nextBoolean() ? Integer.MAX_VALUE : 4 + random.nextInt(8)).build();
            receivers.put(r, rig.receiver(r, blocks, options, this::arrived));
            d.append(", rank ").append(r).append(" holds ").append(blocks.capacity()).append(" blocks");
        }
        description = d.toString();
    }

    /** Plans and starts the round's chaos; returns at once, the chaos plays out on its own threads. */
    void start() {
        for (int p : prefillRanks) {
            int count = 3 + random.nextInt(6);
            for (int i = 0; i < count; i++) plan("p" + p + "-" + i, p);
        }
        if (random.nextInt(4) == 0) closeLater(prefillRanks.get(random.nextInt(prefillRanks.size())), true);
        if (random.nextInt(4) == 0) closeLater(decodeRanks.get(random.nextInt(decodeRanks.size())), false);
    }

    private void plan(String name, int sender) {
        int receiver = decodeRanks.get(random.nextInt(decodeRanks.size()));
        int tokens = 1 + random.nextInt(4 * LAYOUT.tokensPerBlock());
        int[] from = KvRig.randomBlocks(random, LAYOUT.blocksFor(tokens), LAYOUT.blocks());
        boolean withheld = random.nextInt(7) == 0;
        boolean shortDeadline = withheld || random.nextInt(4) == 0;
        Duration deadline = shortDeadline ? Duration.ofMillis(5 + random.nextInt(600)) : LONG_DEADLINE;
        boolean bySender = random.nextInt(7) == 0;
        boolean byReceiver = random.nextInt(7) == 0;
        Planned p = new Planned(name, sender, receiver, tokens, from, deadline, withheld, bySender, byReceiver, random.nextInt(150));
        requests.add(p);
        byName.put(name, p);
        int withheldLayer = withheld ? random.nextInt(LAYOUT.layers()) : -1;
        long[] layerDelay = new long[LAYOUT.layers()];
        for (int l = 0; l < layerDelay.length; l++) layerDelay[l] = random.nextInt(120);
        long senderCancelDelay = random.nextInt(300);
        later(random.nextInt(200), () -> {
            try {
                p.send = senders.get(sender).send(new KvRequest(name, receiver, tokens, from, deadline));
            } catch (InvalidUsageException closed) {
                return; // the chaos closed the sender first: nothing was sent
            } finally {
                p.attempted = true;
            }
            KvSend send = p.send;
            for (int l = 0; l < layerDelay.length; l++) {
                int layer = l;
                if (layer != withheldLayer) later(layerDelay[l], () -> send.ready(layer));
            }
            if (bySender) later(senderCancelDelay, send::cancel);
        });
    }

    private void closeLater(int rank, boolean sender) {
        later(random.nextInt(400), () -> {
            closedByChaos.add(rank);
            if (sender) senders.get(rank).closeAsync();
            else receivers.get(rank).closeAsync();
        });
    }

    /**
     * After the chaos ended: one request from every sender still open to every receiver still open, with nothing done
     * to it. Each must arrive: the chaos must not have left a receiver short of blocks, slots or turns.
     */
    void sendOnceMore() {
        for (int p : prefillRanks) {
            for (int d : decodeRanks) {
                if (closedByChaos.contains(p) || closedByChaos.contains(d)) continue;
                int tokens = 4 * LAYOUT.tokensPerBlock();
                int[] from = KvRig.randomBlocks(random, LAYOUT.blocksFor(tokens), LAYOUT.blocks());
                Planned x = new Planned("after-" + p + "-" + d, p, d, tokens, from, LONG_DEADLINE, false, false, false, 0);
                afterChaos.add(x);
                byName.put(x.name, x);
                x.send = senders.get(p).send(new KvRequest(x.name, d, tokens, from, LONG_DEADLINE)).allReady();
                x.attempted = true;
            }
        }
    }

    /** Runs {@code action} after {@code millis} on the chaos threads, counted in {@link #actionsPending()} until it ran. */
    private void later(long millis, Runnable action) {
        pending.incrementAndGet();
        chaos.schedule(() -> {
            try {
                action.run();
            } catch (RuntimeException e) {
                problems.add("a chaos action threw " + e);
            } finally {
                pending.decrementAndGet();
            }
        }, millis, TimeUnit.MILLISECONDS);
    }

    /** Chaos actions scheduled and not yet run (a decode cancel is scheduled when its request arrives). */
    int actionsPending() {
        return pending.get();
    }

    /** The decode application: on the receiver's thread, so it only hands the request over. */
    private void arrived(KvIncoming incoming) {
        Planned p = byName.get(incoming.request());
        if (p == null) {
            problems.add("an unknown request arrived: " + incoming);
            return;
        }
        p.incoming = incoming;
        if (p.cancelledByReceiver) later(p.receiverCancelDelayMillis, incoming::cancel);
        incoming.done().whenCompleteAsync((received, error) -> {
            if (received == null) return; // the receiver gave the blocks back itself
            long wrong = KvRig.wrongBytes(LAYOUT, sources.get(p.sender), p.sourceBlocks, LAYOUT, rig.pool(p.receiver),
                    received.blocks(), p.tokens);
            if (wrong != 0) problems.add(p + " arrived with " + wrong + " wrong bytes");
            allocators.get(p.receiver).free(received.blocks());
        }, decoder);
    }

    /** The failures {@code p} may end with, on either side, given the chaos planned for it. */
    Set<KvFailure> allowedFailures(Planned p) {
        Set<KvFailure> allowed = EnumSet.noneOf(KvFailure.class);
        if (!p.deadline.equals(LONG_DEADLINE)) allowed.add(KvFailure.DEADLINE);
        if (p.cancelledBySender) allowed.add(KvFailure.CANCELLED_BY_SENDER);
        if (p.cancelledByReceiver) allowed.add(KvFailure.CANCELLED_BY_RECEIVER);
        if (closedByChaos.contains(p.sender) || closedByChaos.contains(p.receiver)) {
            allowed.add(KvFailure.CLOSED);
            allowed.add(KvFailure.PEER_LOST);
        }
        // A sender that links to a receiver while it closes is refused the link.
        if (closedByChaos.contains(p.receiver)) allowed.add(KvFailure.REFUSED);
        return allowed;
    }

    @Override
    public String toString() {
        return "round seed " + seed + ": " + description + (closedByChaos.isEmpty() ? "" : ", closed at random: " + closedByChaos);
    }

    /** Stops the chaos, then closes every sender, receiver, pool and communicator of the round. */
    @Override
    public void close() throws Exception {
        chaos.shutdownNow();
        decoder.shutdown();
        decoder.awaitTermination(30, TimeUnit.SECONDS);
        rig.close();
    }
}
