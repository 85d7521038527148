package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.jccl.rma.reactive.ReactiveKvReceiver;
import org.jccl.rma.reactive.ReactiveKvSender;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The reactive shape of KV transfers: layers in as a Flux, requests out as a Flux, cancel as cancel. */
class KvReactiveHostTest {
    static final KvLayout LAYOUT = KvRig.small().build();

    @Test
    void layersFlowInAndRequestsFlowOut() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            rig.fill(0, 9);
            rig.zero(1);
            byte[] source = rig.pool(0);
            KvBlockPool blocks = new KvBlockPool(LAYOUT.blocks());
            ReactiveKvReceiver receiver = ReactiveKvReceiver.open(rig.pools.get(1), blocks, KvOptions.DEFAULT).block(Duration.ofSeconds(30));
            ReactiveKvSender sender = ReactiveKvSender.open(rig.pools.get(0), KvOptions.DEFAULT);
            int[] from = KvRig.randomBlocks(new Random(2), 3, LAYOUT.blocks());
            Flux<KvLayer> computed = Flux.range(0, LAYOUT.layers()).delayElements(Duration.ofMillis(5)).map(KvLayer::of);
            StepVerifier.create(sender.send(new KvRequest("reactive", 1, 10, from, KvRig.seconds(30)), computed))
                    .assertNext(d -> assertEquals(KvPathKind.COPY, d.path()))
                    .verifyComplete();
            KvIncoming in = receiver.incoming().blockFirst(Duration.ofSeconds(30));
            StepVerifier.create(ReactiveKvReceiver.layers(in).collectList())
                    .assertNext(layers -> assertEquals(LAYOUT.layers(), layers.size())).verifyComplete();
            KvReceived r = ReactiveKvReceiver.done(in).block(Duration.ofSeconds(30));
            assertEquals(0, KvRig.wrongBytes(LAYOUT, source, from, LAYOUT, rig.pool(1), r.blocks(), 10));
            sender.closeAsync().block(Duration.ofSeconds(30));
            receiver.closeAsync().block(Duration.ofSeconds(30));
        }
    }

    @Test
    void cancellingTheMonoCancelsTheRequestAndALayerStreamThatEndsEarlyToo() throws Exception {
        try (KvRig rig = new KvRig(List.of(LAYOUT, LAYOUT), 1024)) {
            KvBlockPool blocks = new KvBlockPool(LAYOUT.blocks());
            ReactiveKvReceiver receiver = ReactiveKvReceiver.open(rig.pools.get(1), blocks, KvOptions.DEFAULT).block(Duration.ofSeconds(30));
            ReactiveKvSender sender = ReactiveKvSender.open(rig.pools.get(0), KvOptions.DEFAULT);
            StepVerifier.create(sender.send(new KvRequest("never", 1, 4, new int[] {0}, KvRig.seconds(30)), Flux.never()))
                    .thenAwait(Duration.ofMillis(50)).thenCancel().verify(Duration.ofSeconds(10));
            StepVerifier.create(sender.send(new KvRequest("short", 1, 4, new int[] {1}, KvRig.seconds(30)), Flux.just(KvLayer.of(0))))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof KvTransferException, String.valueOf(e));
                        assertEquals(KvFailure.CANCELLED_BY_SENDER, ((KvTransferException) e).failure());
                    }).verify(Duration.ofSeconds(30));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> blocks.available() == LAYOUT.blocks());
            sender.closeAsync().block(Duration.ofSeconds(30));
            receiver.closeAsync().block(Duration.ofSeconds(30));
            StepVerifier.create(receiver.incoming().map(KvIncoming::request).collectList())
                    .assertNext(names -> assertTrue(names.size() <= 2, String.valueOf(names))).verifyComplete();
        }
    }
}
