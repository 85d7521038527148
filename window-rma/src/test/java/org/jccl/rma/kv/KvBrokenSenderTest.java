package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jccl.rma.kv.KvMessage.Announce;
import org.jccl.rma.kv.KvMessage.Grant;
import org.jccl.rma.kv.KvMessage.Hello;
import org.jccl.rma.kv.KvMessage.PieceSent;
import org.jccl.rma.kv.KvMessage.Slot;
import org.jccl.rma.kv.KvMessage.Want;
import org.jccl.rma.kv.KvMessage.Welcome;
import org.junit.jupiter.api.Test;

/**
 * A receiver facing a sender that breaks the protocol (a peer with a bug, or of another version): what it can tell is
 * wrong ends that sender's link, fails its requests with {@link KvFailure#PEER_LOST} and frees their blocks at once,
 * never at their deadline; a well-behaved sender's requests keep going. The broken sender is played by hand over a
 * link of this process, message by message.
 */
class KvBrokenSenderTest {
    private static final KvLayout LAYOUT = KvRig.small().build();
    private static final Duration SOON = Duration.ofSeconds(5); // far below the broken requests' 60 s deadlines

    /** The sender's end of a link, played by the test: what arrives is queued, and whether the link was lost. */
    private static final class HandPlayedSender implements KvLink.Handler {
        final BlockingQueue<KvMessage> arrived = new LinkedBlockingQueue<>();
        volatile String lost;
        KvLink link;

        static HandPlayedSender connect(KvRig rig) throws Exception {
            HandPlayedSender s = new HandPlayedSender();
            s.link = KvLinks.connect(rig.pools.get(0), 1, KvOptions.DEFAULT, s).get(10, TimeUnit.SECONDS);
            return s;
        }

        @Override
        public void received(KvMessage message) {
            arrived.add(message);
        }

        @Override
        public void lost(String why) {
            lost = why;
        }

        <M extends KvMessage> M next(Class<M> type) throws InterruptedException {
            KvMessage m = arrived.poll(10, TimeUnit.SECONDS);
            assertTrue(type.isInstance(m), "expected a " + type.getSimpleName() + ", got " + m);
            return type.cast(m);
        }

        /** Says hello on a staged path and announces one request of {@code tokens}; returns its grant. */
        Grant helloAndAnnounce(int tokens) throws InterruptedException {
            link.send(new Hello(0, LAYOUT, KvPathKind.SEND_RECV, 1024));
            assertEquals("", next(Welcome.class).refusal());
            link.send(new Announce(1, "broken", tokens, 60_000));
            return next(Grant.class);
        }
    }

    private static KvTransferException failure(KvIncoming incoming) {
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> incoming.done().get(SOON.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(e.getCause() instanceof KvTransferException, String.valueOf(e.getCause()));
        return (KvTransferException) e.getCause();
    }

    private static void assertTheOthersStillGetThrough(KvRig rig, List<KvIncoming> arrived) throws Exception {
        KvSender good = rig.sender(0, KvOptions.builder().path(KvPathKind.SEND_RECV).build());
        good.send(new KvRequest("good", 1, 16, new int[] {0, 1, 2, 3}, KvRig.seconds(30))).allReady().done().get(30, TimeUnit.SECONDS);
        assertTrue(arrived.stream().anyMatch(in -> in.request().equals("good") && in.done().isDone()));
    }

    @Test
    void aPieceOutsideItsRequestEndsTheSendersLinkAndFreesTheBlocksAtOnce() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool blocks = new KvBlockPool(LAYOUT.blocks());
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, blocks, KvOptions.DEFAULT, arrived::add);
            HandPlayedSender broken = HandPlayedSender.connect(rig);
            broken.helloAndAnnounce(16);
            broken.link.send(new Want(1, 1));
            Slot slot = broken.next(Slot.class);
            broken.link.send(new PieceSent(1, 0, 0, 99, slot.slot())); // a request of 16 tokens has no piece 99

            await().atMost(SOON).until(() -> broken.lost != null);
            assertTrue(broken.lost.contains("piece 99"), broken.lost);
            assertEquals(KvFailure.PEER_LOST, failure(arrived.get(0)).failure());
            await().atMost(SOON).until(() -> blocks.available() == blocks.capacity());
            assertTheOthersStillGetThrough(rig, arrived);
        }
    }

    @Test
    void aPieceOfALayerOrTensorOrSlotThatDoesNotExistEndsTheSendersLink() throws Exception {
        int[][] wrong = {{LAYOUT.layers(), 0, 0}, {0, LAYOUT.tensors(), 0}, {0, 0, -1}};
        for (int[] w : wrong) {
            try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
                List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
                rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.DEFAULT, arrived::add);
                HandPlayedSender broken = HandPlayedSender.connect(rig);
                broken.helloAndAnnounce(16);
                broken.link.send(new Want(1, 1));
                Slot slot = broken.next(Slot.class);
                broken.link.send(new PieceSent(1, w[0], w[1], w[2], slot.slot()));
                await().atMost(SOON).until(() -> broken.lost != null);
                assertEquals(KvFailure.PEER_LOST, failure(arrived.get(0)).failure());
                assertTheOthersStillGetThrough(rig, arrived);
            }
        }
    }

    @Test
    void aSlotTheReceiverNeverGaveEndsTheSendersLink() throws Exception {
        for (int slot : new int[] {-1, KvOptions.DEFAULT.slots()}) {
            try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
                List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
                rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.DEFAULT, arrived::add);
                HandPlayedSender broken = HandPlayedSender.connect(rig);
                broken.helloAndAnnounce(16);
                broken.link.send(new PieceSent(1, -1, -1, -1, slot)); // "a piece of nothing" in a slot outside the area
                await().atMost(SOON).until(() -> broken.lost != null);
                assertEquals(KvFailure.PEER_LOST, failure(arrived.get(0)).failure());
                assertTheOthersStillGetThrough(rig, arrived);
            }
        }
    }

    @Test
    void aSlotHeldByASenderThatIsLostComesBack() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.builder().slots(1).build(), arrived::add);
            HandPlayedSender dying = HandPlayedSender.connect(rig);
            dying.helloAndAnnounce(16);
            dying.link.send(new Want(1, 1));
            dying.next(Slot.class); // the receiver's only slot
            dying.link.close("the sender's process died"); // before it filled the slot
            assertEquals(KvFailure.PEER_LOST, failure(arrived.get(0)).failure());
            // A staged request needs that slot: without it this waits for its deadline.
            KvSender good = rig.sender(0, KvOptions.builder().path(KvPathKind.SEND_RECV).build());
            good.send(new KvRequest("good", 1, 16, new int[] {0, 1, 2, 3}, SOON)).allReady().done().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aPieceOfAnUnknownRequestEndsTheSendersLink() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.DEFAULT, arrived::add);
            HandPlayedSender broken = HandPlayedSender.connect(rig);
            broken.helloAndAnnounce(16);
            broken.link.send(new Want(1, 1));
            Slot slot = broken.next(Slot.class);
            broken.link.send(new PieceSent(77, 0, 0, 0, slot.slot()));
            await().atMost(SOON).until(() -> broken.lost != null);
            assertTrue(broken.lost.contains("unknown request 77"), broken.lost);
            assertEquals(KvFailure.PEER_LOST, failure(arrived.get(0)).failure());
            assertTheOthersStillGetThrough(rig, arrived);
        }
    }

    @Test
    void aSenderThatDoesNotSayHelloFirstIsDropped() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(LAYOUT.blocks()), KvOptions.DEFAULT, arrived::add);
            HandPlayedSender broken = HandPlayedSender.connect(rig);
            broken.link.send(new Announce(1, "rude", 16, 60_000));
            await().atMost(SOON).until(() -> broken.lost != null);
            assertTrue(arrived.isEmpty());
            assertTheOthersStillGetThrough(rig, arrived);
        }
    }
}
