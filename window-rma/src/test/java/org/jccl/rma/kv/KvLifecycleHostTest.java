package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.DataType;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Credits, fairness, deadlines, cancellation and bad input of KV transfers, between host ranks of one JVM. */
class KvLifecycleHostTest {
    static final KvLayout LAYOUT = KvRig.small().build();

    private static int[] blocks(int first, int count) {
        int[] b = new int[count];
        for (int i = 0; i < count; i++) b[i] = first + i;
        return b;
    }

    private static KvTransferException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof KvTransferException, String.valueOf(e.getCause()));
        return (KvTransferException) e.getCause();
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "PUT_SIGNAL", "SEND_RECV"})
    void decodeGrantsOnlyWhatItCanHoldAndPrefillWaitsWithoutRetrying(KvPathKind path) throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool decodeBlocks = new KvBlockPool(8); // two requests of 4 blocks at a time
            AtomicInteger granted = new AtomicInteger();
            AtomicInteger mostGranted = new AtomicInteger();
            List<KvIncoming> held = new CopyOnWriteArrayList<>();
            rig.receiver(1, decodeBlocks, KvOptions.DEFAULT, in -> {
                mostGranted.accumulateAndGet(granted.incrementAndGet(), Math::max);
                held.add(in);
            });
            KvSender sender = rig.sender(0, KvOptions.builder().path(path).build());
            List<KvSend> sends = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                sends.add(sender.send(new KvRequest("r" + i, 1, 16, blocks(0, 4), KvRig.seconds(30))).allReady());
            }
            // A slow decoder: it gives blocks back only after it "decoded" a finished request.
            for (int freed = 0; freed < 6; freed++) {
                await().atMost(Duration.ofSeconds(30)).until(() -> held.stream().anyMatch(in -> in.done().isDone()));
                KvIncoming done = held.stream().filter(in -> in.done().isDone()).findFirst().orElseThrow();
                held.remove(done);
                granted.decrementAndGet();
                decodeBlocks.free(done.done().get().blocks());
            }
            for (KvSend s : sends) s.done().get(30, TimeUnit.SECONDS);
            assertEquals(2, mostGranted.get(), "never more granted than the allocator holds");
            assertEquals(8, decodeBlocks.available());
            assertTrue(sends.get(5).done().get().waitedNanos() > sends.get(0).done().get().waitedNanos(),
                    "the last request waited for blocks");
        }
    }

    @Test
    void maxGrantedBlocksBoundsWhatIsInFlightWhateverTheAllocatorHolds() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            AtomicInteger inFlight = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            KvBlockPool decodeBlocks = new KvBlockPool(LAYOUT.blocks());
            rig.receiver(1, decodeBlocks, KvOptions.builder().maxGrantedBlocks(4).build(), in -> {
                most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                in.done().whenComplete((r, e) -> inFlight.decrementAndGet()).thenAccept(r -> decodeBlocks.free(r.blocks()));
            });
            KvSender sender = rig.sender(0, KvOptions.DEFAULT);
            List<KvSend> sends = new ArrayList<>();
            for (int i = 0; i < 5; i++) sends.add(sender.send(new KvRequest("r" + i, 1, 16, blocks(4 * (i % 4), 4), KvRig.seconds(30))).allReady());
            for (KvSend s : sends) s.done().get(30, TimeUnit.SECONDS);
            assertEquals(1, most.get());
        }
    }

    @Test
    void twoPrefillRanksShareTheDecodeRankInTurn() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT, LAYOUT), 1024)) {
            HeldBlocks decodeBlocks = new HeldBlocks(4); // one request at a time, once released
            List<Integer> grantOrder = new CopyOnWriteArrayList<>();
            rig.receiver(2, decodeBlocks, KvOptions.DEFAULT, in -> {
                grantOrder.add(in.sender());
                in.done().thenAccept(r -> decodeBlocks.free(r.blocks()));
            });
            List<KvSend> sends = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                KvSender sender = rig.sender(p, KvOptions.DEFAULT);
                for (int i = 0; i < 6; i++) {
                    sends.add(sender.send(new KvRequest("p" + p + "-" + i, 2, 16, blocks(0, 4), KvRig.seconds(30))).allReady());
                }
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> decodeBlocks.attempts() >= sends.size()); // all queued
            decodeBlocks.release();
            for (KvSend s : sends) s.done().get(30, TimeUnit.SECONDS);
            assertEquals(12, grantOrder.size());
            for (int i = 1; i < grantOrder.size(); i++) {
                assertTrue(!grantOrder.get(i).equals(grantOrder.get(i - 1)), "grants went " + grantOrder);
            }
        }
    }

    /**
     * The usual decoder gives blocks back after it decoded a request, from its own thread: each free alone grants the
     * next request, and the turn must pass to the next prefill rank only when one was granted.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void prefillRanksTakeTurnsWhenDecodeFreesBlocksAfterDecoding(int prefillRanks) throws Exception {
        int requestsEach = 5;
        int decode = prefillRanks;
        try (KvRig rig = new KvRig(java.util.Collections.nCopies(prefillRanks + 1, LAYOUT), 1024)) {
            HeldBlocks decodeBlocks = new HeldBlocks(4); // one request at a time, once released
            List<KvIncoming> granted = new CopyOnWriteArrayList<>();
            rig.receiver(decode, decodeBlocks, KvOptions.DEFAULT, granted::add);
            List<KvSend> sends = new ArrayList<>();
            for (int p = 0; p < prefillRanks; p++) {
                KvSender sender = rig.sender(p, KvOptions.DEFAULT);
                for (int i = 0; i < requestsEach; i++) {
                    sends.add(sender.send(new KvRequest("p" + p + "-" + i, decode, 16, blocks(0, 4), KvRig.seconds(30))).allReady());
                }
            }
            int total = prefillRanks * requestsEach;
            await().atMost(Duration.ofSeconds(10)).until(() -> decodeBlocks.attempts() >= total); // all queued
            decodeBlocks.release();
            for (int freed = 0; freed < total; freed++) {
                int next = freed;
                await().atMost(Duration.ofSeconds(30)).until(() -> granted.size() > next && granted.get(next).done().isDone());
                decodeBlocks.free(granted.get(next).done().get().blocks());
            }
            for (KvSend s : sends) s.done().get(30, TimeUnit.SECONDS);
            List<Integer> order = granted.stream().map(KvIncoming::sender).toList();
            // Every rank has requests waiting from the first grant to the last: each window of one grant per rank
            // holds every rank once.
            for (int end = prefillRanks; end <= total; end++) {
                assertEquals(prefillRanks, new java.util.HashSet<>(order.subList(end - prefillRanks, end)).size(), "grants went " + order);
            }
        }
    }

    @Test
    void aRequestWithoutBlocksFailsAtItsDeadlineOnBothSidesAndNothingIsHeld() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool decodeBlocks = new KvBlockPool(4);
            int[] taken = decodeBlocks.allocate(4); // decode is full
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, decodeBlocks, KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.DEFAULT);
            KvSend waiting = sender.send(new KvRequest("late", 1, 16, blocks(0, 4), Duration.ofMillis(300))).allReady();
            KvTransferException e = failure(waiting.done());
            assertEquals(KvFailure.DEADLINE, e.failure());
            assertEquals("late", e.request());
            assertTrue(arrived.isEmpty());
            decodeBlocks.free(taken);
            KvSend next = sender.send(new KvRequest("next", 1, 16, blocks(0, 4), KvRig.seconds(30))).allReady();
            next.done().get(30, TimeUnit.SECONDS);
            rig.allReduceWorks();
        }
    }

    @Test
    void aGrantedRequestWhoseLayersNeverComeFailsAtItsDeadlineAndItsBlocksComeBack() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool decodeBlocks = new KvBlockPool(LAYOUT.blocks());
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, decodeBlocks, KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.DEFAULT);
            KvSend stuck = sender.send(new KvRequest("stuck", 1, 16, blocks(0, 4), Duration.ofMillis(400))).ready(0);
            assertEquals(KvFailure.DEADLINE, failure(stuck.done()).failure());
            await().atMost(Duration.ofSeconds(10)).until(() -> arrived.size() == 1 && arrived.get(0).done().isDone());
            KvTransferException onDecode = failure(arrived.get(0).done());
            assertEquals("stuck", onDecode.request());
            await().atMost(Duration.ofSeconds(10)).until(() -> decodeBlocks.available() == LAYOUT.blocks());
            rig.allReduceWorks();
        }
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "PUT_SIGNAL", "SEND_RECV"})
    void cancelFromEitherSideEndsBothTypedAndFreesTheBlocks(KvPathKind path) throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool decodeBlocks = new KvBlockPool(LAYOUT.blocks());
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, decodeBlocks, KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.builder().path(path).build());

            KvSend bySender = sender.send(new KvRequest("by-sender", 1, 16, blocks(0, 4), KvRig.seconds(30))).ready(0);
            await().atMost(Duration.ofSeconds(10)).until(() -> arrived.size() == 1);
            arrived.get(0).layer(0).get(30, TimeUnit.SECONDS);
            bySender.cancel();
            assertEquals(KvFailure.CANCELLED_BY_SENDER, failure(bySender.done()).failure());
            assertEquals(KvFailure.CANCELLED_BY_SENDER, failure(arrived.get(0).done()).failure());

            KvSend byReceiver = sender.send(new KvRequest("by-receiver", 1, 16, blocks(4, 4), KvRig.seconds(30))).ready(0).ready(1);
            await().atMost(Duration.ofSeconds(10)).until(() -> arrived.size() == 2);
            arrived.get(1).cancel();
            assertEquals(KvFailure.CANCELLED_BY_RECEIVER, failure(byReceiver.done()).failure());
            assertEquals(KvFailure.CANCELLED_BY_RECEIVER, failure(arrived.get(1).done()).failure());
            await().atMost(Duration.ofSeconds(10)).until(() -> decodeBlocks.available() == LAYOUT.blocks());

            sender.send(new KvRequest("after", 1, 16, blocks(8, 4), KvRig.seconds(30))).allReady().done().get(30, TimeUnit.SECONDS);
            rig.allReduceWorks();
        }
    }

    @Test
    void badInputIsRefusedTypedAndSendsNothing() throws Exception {
        KvLayout otherHeadDim = KvRig.small().headDim(4).build();
        KvLayout bigPrefill = KvRig.small().blocks(32).build();
        try (KvRig rig = new KvRig(List.of(bigPrefill, LAYOUT, otherHeadDim), 1024)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.DEFAULT, arrived::add);
            rig.receiver(2, new KvBlockPool(otherHeadDim.blocks()), KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.DEFAULT);
            java.time.Duration d = KvRig.seconds(30);
            assertThrows(InvalidArgumentException.class, () -> sender.send(new KvRequest("out", 1, 8, new int[] {0, 32}, d)));
            assertThrows(InvalidArgumentException.class, () -> sender.send(new KvRequest("twice", 1, 8, new int[] {3, 3}, d)));
            assertThrows(InvalidArgumentException.class, () -> sender.send(new KvRequest("few", 1, 9, new int[] {0, 1}, d)));
            assertThrows(InvalidArgumentException.class, () -> sender.send(new KvRequest("nobody", 3, 8, new int[] {0, 1}, d)));
            assertThrows(InvalidArgumentException.class, () -> new KvRequest("none", 1, 0, new int[0], d));
            assertThrows(InvalidArgumentException.class, () -> new KvRequest("", 1, 4, new int[] {0}, d));
            KvSend ok = sender.send(new KvRequest("layers", 1, 4, new int[] {0}, d));
            assertThrows(InvalidArgumentException.class, () -> ok.ready(LAYOUT.layers()));
            ok.ready(0);
            assertThrows(InvalidArgumentException.class, () -> ok.ready(0));
            ok.ready(1).ready(2).done().get(30, TimeUnit.SECONDS);

            KvTransferException layout = failure(sender.send(new KvRequest("mismatch", 2, 4, new int[] {0}, d)).allReady().done());
            assertEquals(KvFailure.REFUSED, layout.failure());
            assertTrue(layout.getMessage().contains("headDim"), layout.getMessage());
            KvTransferException tooBig = failure(sender.send(new KvRequest("huge", 1, 4 * 17, blocks(0, 17), d)).allReady().done());
            assertEquals(KvFailure.REFUSED, tooBig.failure());
            assertTrue(tooBig.getMessage().contains("17 blocks"), tooBig.getMessage());
            assertEquals(1, arrived.size(), "only the good request reached decode");
            assertThrows(InvalidArgumentException.class, () -> KvLayout.builder().layers(1).tensors(3).blocks(1)
                    .tokensPerBlock(1).kvHeads(1).headDim(1).type(DataType.FLOAT32).build());
        }
    }
}
