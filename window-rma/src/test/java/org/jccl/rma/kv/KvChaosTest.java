package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.rma.kv.KvChaosRound.Planned;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Seeded chaos of the KV protocol between 2 or 3 host ranks of one JVM ({@link KvChaosRound}: random requests on the
 * COPY, PUT_SIGNAL and SEND_RECV paths, cancels from either side, deadlines that expire, layers that never come,
 * senders and receivers closed at random moments). After each round:
 * <ul>
 *   <li>every {@link KvSend#done()} and {@link KvIncoming#done()} has completed: nothing is left pending;</li>
 *   <li>every failure is a {@link KvTransferException} naming its request, with a {@link KvFailure} the round's chaos
 *       explains (a request nothing happened to must arrive), and a request its sender saw delivered arrived;</li>
 *   <li>every byte that arrived is right, and each allocator has every block back once the decode application freed
 *       the requests that arrived;</li>
 *   <li>every sender and receiver the chaos left open still carries a request (no blocks, staging slots or turns
 *       were lost), and its bytes are right;</li>
 *   <li>closing every sender and receiver leaves none of their threads, and the communicators still all-reduce.</li>
 * </ul>
 * After the last round no {@code jccl-kv-*} thread is left at all (the deadline timer's ends once idle).
 *
 * <p>The seed is printed first. {@code -Djccl.kv.chaos.seed=S} replays a run's choices (thread timing is not
 * replayed); round {@code r} runs with seed {@code S + r}, and a failure names its round's seed, so
 * {@code -Djccl.kv.chaos.seed=<round seed> -Djccl.kv.chaos.rounds=1} replays that round alone. For a long soak:
 * {@code mvn -B -o -pl window-rma test -Dtest=KvChaosTest -Djccl.kv.chaos.rounds=500} (default 10 rounds).
 */
class KvChaosTest {
    private static final long SEED = Long.getLong("jccl.kv.chaos.seed", System.nanoTime());
    private static final int ROUNDS = Integer.getInteger("jccl.kv.chaos.rounds", 10);
    /** How long a round's requests may take to end: every deadline is shorter, so this only catches a hang. */
    private static final Duration ENDS_WITHIN = Duration.ofSeconds(40);

    @Test
    void requestsCancelledExpiredAndClosedAtRandomEndTypedAndLeaveNothingBehind() throws Exception {
        System.out.println("KvChaosTest seed " + SEED + " (-Djccl.kv.chaos.seed=" + SEED + "), " + ROUNDS + " rounds");
        for (int round = 0; round < ROUNDS; round++) {
            try (KvChaosRound r = new KvChaosRound(SEED + round)) {
                r.start();
                everyRequestEndsAsTheChaosExplains(r);
                everyBlockComesBack(r);
                whatIsStillOpenStillTransfers(r);
                everyBlockComesBack(r);
                closingLeavesNoThreadAndTheCommunicatorsWork(r);
            }
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(List.of(), threads("jccl-kv-")));
    }

    private static void everyRequestEndsAsTheChaosExplains(KvChaosRound r) {
        await().atMost(ENDS_WITHIN).until(() -> r.actionsPending() == 0 && r.requests.stream().allMatch(p -> p.attempted));
        Map<KvFailure, Integer> failures = new EnumMap<>(KvFailure.class);
        int delivered = 0;
        for (Planned p : r.requests) {
            KvSend send = p.send;
            if (send == null) continue; // its sender was closed before it was sent: send() refused it
            Throwable sent = outcome(r, p, "KvSend.done()", send.done());
            checkFailure(r, p, sent, "the sender");
            KvIncoming incoming = p.incoming;
            Throwable received = incoming == null ? null : outcome(r, p, "KvIncoming.done()", incoming.done());
            checkFailure(r, p, received, "the receiver");
            if (sent == null) {
                delivered++;
                assertNotNull(incoming, () -> r + ": " + p + " was delivered and never arrived");
                assertNull(received, () -> r + ": " + p + " was delivered and failed on the receiver: " + received);
            } else {
                failures.merge(((KvTransferException) sent).failure(), 1, Integer::sum);
            }
        }
        assertEquals(List.of(), r.problems, r::toString);
        System.out.println(r + " — " + r.requests.size() + " requests, " + delivered + " delivered, failed " + failures);
    }

    /** How {@code done} ended: null when it completed, else the failure; a future that never ends fails the test. */
    private static @Nullable Throwable outcome(KvChaosRound r, Planned p, String what, CompletableFuture<?> done) {
        try {
            done.get(ENDS_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException | InterruptedException e) {
            return fail(r + ": " + what + " of " + p + " never ended");
        }
    }

    private static void checkFailure(KvChaosRound r, Planned p, @Nullable Throwable failure, String side) {
        if (failure == null) return;
        if (!(failure instanceof KvTransferException e)) {
            throw new AssertionError(r + ": " + p + " failed on " + side + " untyped", failure);
        }
        assertEquals(p.name, e.request(), () -> r + ": " + e);
        Set<KvFailure> allowed = r.allowedFailures(p);
        assertTrue(allowed.contains(e.failure()), () -> r + ": " + p + " failed on " + side + " with " + e.failure()
                + ", which its chaos " + allowed + " does not explain: " + e.getMessage());
    }

    private static void whatIsStillOpenStillTransfers(KvChaosRound r) {
        r.sendOnceMore();
        for (Planned p : r.afterChaos) {
            assertNull(outcome(r, p, "KvSend.done()", p.send.done()), () -> r + ": " + p + " sent after the chaos failed");
            assertNotNull(p.incoming, () -> r + ": " + p + " was delivered and never arrived");
            assertNull(outcome(r, p, "KvIncoming.done()", p.incoming.done()), () -> r + ": " + p + " failed on the receiver");
        }
        assertEquals(List.of(), r.problems, r::toString);
    }

    private static void everyBlockComesBack(KvChaosRound r) {
        for (Map.Entry<Integer, KvBlockPool> e : r.allocators.entrySet()) {
            KvBlockPool blocks = e.getValue();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(blocks.capacity(), blocks.available(),
                    () -> r + ": blocks of rank " + e.getKey() + " free"));
        }
    }

    private static void closingLeavesNoThreadAndTheCommunicatorsWork(KvChaosRound r) throws Exception {
        for (KvSender s : r.senders.values()) s.closeAsync().get(30, TimeUnit.SECONDS);
        for (KvReceiver s : r.receivers.values()) s.closeAsync().get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertEquals(List.of(), threads("jccl-kv-send"), r::toString);
            assertEquals(List.of(), threads("jccl-kv-receive"), r::toString);
        });
        r.rig.allReduceWorks();
    }

    /** The names of live threads whose name starts with {@code prefix}. */
    static List<String> threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                .map(Thread::getName).toList();
    }
}
