package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Stream;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** KV transfers between host ranks of one JVM: every byte where the layouts say, on every path. */
class KvTransferHostTest {
    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "PUT_SIGNAL", "SEND_RECV"})
    void aRequestLandsByteForByteInTheGrantedBlocks(KvPathKind path) throws Exception {
        KvLayout layout = KvRig.small().build();
        try (KvRig rig = new KvRig(List.of(layout, layout), 1024)) {
            Random random = new Random(7);
            rig.fill(0, 1);
            rig.zero(1);
            byte[] source = rig.pool(0);
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            KvBlockPool blocks = new KvBlockPool(layout.blocks());
            rig.receiver(1, blocks, KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.builder().path(path).build());
            int tokens = 21;
            int[] from = KvRig.randomBlocks(random, layout.blocksFor(tokens), layout.blocks());
            KvSend send = sender.send(new KvRequest("r1", 1, tokens, from, KvRig.seconds(30)));
            send.allReady();
            KvDelivered delivered = send.done().get(30, TimeUnit.SECONDS);
            assertEquals(path, delivered.path());
            KvReceived received = arrived.get(0).done().get(30, TimeUnit.SECONDS);
            assertEquals(0, KvRig.wrongBytes(layout, source, from, layout, rig.pool(1), received.blocks(), tokens));
            rig.allReduceWorks();
        }
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "PUT_SIGNAL", "SEND_RECV"})
    void decodeWithOtherBlockSizesAndHalfTheHeadsOnEachOfTwoRanks(KvPathKind path) throws Exception {
        KvLayout prefill = KvRig.small().tokensPerBlock(4).kvHeads(4).build();
        KvLayout decode0 = KvRig.small().tokensPerBlock(8).kvHeads(2).headOffset(0).blocks(12).build();
        KvLayout decode1 = KvRig.small().tokensPerBlock(2).kvHeads(2).headOffset(2).blocks(20).build();
        try (KvRig rig = new KvRig(List.of(prefill, decode0, decode1), 700)) {
            rig.fill(0, 3);
            rig.zero(1);
            rig.zero(2);
            byte[] source = rig.pool(0);
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(decode0.blocks()), KvOptions.DEFAULT, arrived::add);
            rig.receiver(2, new KvBlockPool(decode1.blocks()), KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.builder().path(path).build());
            int tokens = 19;
            int[] from = KvRig.randomBlocks(new Random(5), prefill.blocksFor(tokens), prefill.blocks());
            KvSend to1 = sender.send(new KvRequest("half-0", 1, tokens, from, KvRig.seconds(30))).allReady();
            KvSend to2 = sender.send(new KvRequest("half-1", 2, tokens, from, KvRig.seconds(30))).allReady();
            to1.done().get(30, TimeUnit.SECONDS);
            to2.done().get(30, TimeUnit.SECONDS);
            for (KvIncoming in : arrived) {
                int rank = in.request().equals("half-0") ? 1 : 2;
                KvLayout d = rank == 1 ? decode0 : decode1;
                KvReceived r = in.done().get(30, TimeUnit.SECONDS);
                assertEquals(0, KvRig.wrongBytes(prefill, source, from, d, rig.pool(rank), r.blocks(), tokens), in.request());
            }
            assertEquals(2, arrived.size());
        }
    }

    /** Only a path that writes with a kernel signals layers on the device; elsewhere layerOn says what to use instead. */
    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "SEND_RECV"})
    void waitingForALayerOnAStreamIsRefusedWhereThePathRaisesNoDeviceSignals(KvPathKind path) throws Exception {
        KvLayout layout = KvRig.small().build();
        try (KvRig rig = new KvRig(List.of(layout, layout), 700)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(layout.blocks()), KvOptions.DEFAULT, arrived::add);
            int[] from = KvRig.randomBlocks(new Random(6), layout.blocksFor(9), layout.blocks());
            KvSend send = rig.sender(0, KvOptions.builder().path(path).build())
                    .send(new KvRequest("no-signals", 1, 9, from, KvRig.seconds(30)));
            await().atMost(Duration.ofSeconds(30)).until(() -> !arrived.isEmpty());
            KvIncoming in = arrived.get(0);
            assertFalse(in.signalsLayersOnDevice());
            try (Stream stream = rig.comms.get(1).backend().createStream(rig.comms.get(1).device())) {
                InvalidUsageException e = assertThrows(InvalidUsageException.class, () -> in.layerOn(0, stream));
                assertTrue(e.getMessage().contains("has no device signals"), e.getMessage());
                assertThrows(InvalidArgumentException.class, () -> in.layerOn(layout.layers(), stream));
                send.allReady();
                in.done().get(30, TimeUnit.SECONDS);
                in.layerOn(0, stream); // done: every layer is there, nothing to wait for
            }
        }
    }
}
