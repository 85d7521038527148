package org.jccl.device.kernels;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvFailure;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvReceived;
import org.jccl.rma.kv.KvReceiver;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvRig;
import org.jccl.rma.kv.KvSend;
import org.jccl.rma.kv.KvSender;
import org.jccl.rma.kv.KvTransferException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Device-side layer signals of the LSA kernel path: decode's own stream waits on the device for each layer
 * ({@link KvIncoming#layerOn}), and a request that ends without its layers lets those waits go.
 */
@Tag("gpu")
class KvLayerSignalGpuTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    /**
     * Decode enqueues, on a stream of its own and before any layer was sent, a wait for each layer and then a copy of
     * that layer out of the pool. Each copy must see its layer whole: without the waits they would copy zeros.
     */
    @Test
    void decodesStreamRunsEachLayersWorkOnlyOnceTheLayerLanded() throws Exception {
        Backend b = twoGpus();
        KvLayout layout = KvTransferGpuTest.model().build();
        try (KvRig rig = new KvRig(b, List.of(layout, layout), 0)) {
            int from = 0;
            int to = 1;
            int tokens = 300;
            rig.fill(from, 21);
            rig.zero(to);
            byte[] source = rig.pool(from);
            int[] src = KvRig.randomBlocks(new Random(8), layout.blocksFor(tokens), layout.blocks());
            KvPool decode = rig.pools.get(to);
            int device = decode.communicator().device();
            try (Stream decodeStream = b.createStream(device);
                 Buffer snapshot = b.allocate(device, layout.poolBytes())) {
                decodeStream.fill(snapshot, 0, layout.poolBytes()).get(30, TimeUnit.SECONDS);
                List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
                rig.receiver(to, new KvBlockPool(layout.blocks()), KvOptions.DEFAULT,
                        in -> {
                            for (int l = 0; l < layout.layers(); l++) {
                                in.layerOn(l, decodeStream);
                                for (int t = 0; t < layout.tensors(); t++) {
                                    decodeStream.copy(snapshot.slice(layout.offset(l, t, 0), layout.tensorBytes()),
                                            decode.tensor(l, t), layout.tensorBytes());
                                }
                            }
                            arrived.add(in);
                        });
                KvSend send = rig.sender(from, KvOptions.builder().path(KvPathKind.LSA_KERNEL).build())
                        .send(new KvRequest("signalled", to, tokens, src, KvRig.seconds(60)));
                await().atMost(WAIT).until(() -> !arrived.isEmpty());
                assertTrue(arrived.get(0).signalsLayersOnDevice());
                Work copied = decodeStream.marker();
                // No layer is ready yet: decode's stream is held on the device.
                await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !copied.isDone());
                send.allReady();
                send.done().get(60, TimeUnit.SECONDS);
                KvReceived received = arrived.get(0).done().get(60, TimeUnit.SECONDS);
                copied.get(60, TimeUnit.SECONDS);
                assertEquals(0, KvRig.wrongBytes(layout, source, src, layout, bytes(snapshot), received.blocks(), tokens));
            }
            rig.allReduceWorks();
        }
    }

    /** A request cancelled before its layers came: decode's stream goes on, and the request says why it has no data. */
    @Test
    void aCancelledRequestLetsTheWaitsOnDecodesStreamGo() throws Exception {
        Backend b = twoGpus();
        KvLayout layout = KvTransferGpuTest.model().build();
        try (KvRig rig = new KvRig(b, List.of(layout, layout), 0);
             Stream decodeStream = b.createStream(rig.comms.get(1).device())) {
            Held held = holdDecodeStream(rig, layout, decodeStream, "cancelled", layout.layers() - 1);
            held.incoming().cancel();
            held.passed().get(30, TimeUnit.SECONDS);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> held.incoming().done().get(30, TimeUnit.SECONDS));
            KvTransferException e = assertInstanceOf(KvTransferException.class, failed.getCause());
            assertEquals(KvFailure.CANCELLED_BY_RECEIVER, e.failure());
            assertThrows(KvTransferException.class, () -> held.incoming().layerOn(0, decodeStream));
            assertThrows(ExecutionException.class, () -> held.send().done().get(30, TimeUnit.SECONDS));
            rig.allReduceWorks();
        }
    }

    /** Closing the receiver ends its requests: their waits on decode's stream go, and the close completes. */
    @Test
    void closingTheReceiverLetsTheWaitsOnDecodesStreamGo() throws Exception {
        Backend b = twoGpus();
        KvLayout layout = KvTransferGpuTest.model().build();
        try (KvRig rig = new KvRig(b, List.of(layout, layout), 0);
             Stream decodeStream = b.createStream(rig.comms.get(1).device())) {
            Held held = holdDecodeStream(rig, layout, decodeStream, "closed", 0);
            held.receiver().closeAsync().get(30, TimeUnit.SECONDS);
            held.passed().get(30, TimeUnit.SECONDS);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> held.incoming().done().get(30, TimeUnit.SECONDS));
            assertEquals(KvFailure.CLOSED, assertInstanceOf(KvTransferException.class, failed.getCause()).failure());
            assertThrows(ExecutionException.class, () -> held.send().done().get(30, TimeUnit.SECONDS));
            rig.allReduceWorks();
        }
    }

    /** A request from rank 0 to rank 1 whose layer decode's stream waits for, and a marker held behind that wait. */
    private record Held(KvReceiver receiver, KvIncoming incoming, KvSend send, Work passed) {
    }

    /**
     * Sends a request none of whose layers will be ready; decode's stream waits for {@code layer} of it, and a marker
     * after that wait is still pending 300 ms later: the stream is held on the device.
     */
    private static Held holdDecodeStream(KvRig rig, KvLayout layout, Stream decodeStream, String name, int layer)
            throws Exception {
        int tokens = 50;
        int[] src = KvRig.randomBlocks(new Random(name.hashCode()), layout.blocksFor(tokens), layout.blocks());
        List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
        KvReceiver receiver = rig.receiver(1, new KvBlockPool(layout.blocks()), KvOptions.DEFAULT, in -> {
            in.layerOn(layer, decodeStream);
            arrived.add(in);
        });
        KvSend send = rig.sender(0, KvOptions.builder().path(KvPathKind.LSA_KERNEL).build())
                .send(new KvRequest(name, 1, tokens, src, KvRig.seconds(60)));
        await().atMost(WAIT).until(() -> !arrived.isEmpty());
        Work passed = decodeStream.marker();
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !passed.isDone());
        return new Held(receiver, arrived.get(0), send, passed);
    }

    /**
     * At most 128 layers' waits are enqueued ahead of the data: with 2-layer requests the first 64 granted have device
     * signals, the others go without (their host futures still work), and once those end a new one has them again.
     * A request a rank sends itself never has them.
     */
    @Test
    void requestsBeyondTheBoundOfWaitsAndRequestsToItselfGoWithoutDeviceSignals() throws Exception {
        Backend b = twoGpus();
        KvLayout layout = KvTransferGpuTest.model().layers(2).blocks(256).build();
        int requests = 100;
        try (KvRig rig = new KvRig(b, List.of(layout, layout), 0)) {
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(layout.blocks()), KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.builder().path(KvPathKind.LSA_KERNEL).build());
            List<KvSend> sends = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                sends.add(sender.send(new KvRequest("r" + i, 1, 16, new int[] {i}, KvRig.seconds(60))));
            }
            await().atMost(WAIT).until(() -> arrived.size() == requests);
            assertEquals(64, arrived.stream().filter(KvIncoming::signalsLayersOnDevice).count());
            for (KvSend s : sends) s.allReady();
            for (KvSend s : sends) s.done().get(60, TimeUnit.SECONDS);
            for (KvIncoming in : arrived) in.done().get(60, TimeUnit.SECONDS);
            arrived.clear();
            sender.send(new KvRequest("again", 1, 16, new int[] {0}, KvRig.seconds(60))).allReady().done().get(60, TimeUnit.SECONDS);
            assertTrue(arrived.get(0).signalsLayersOnDevice());

            List<KvIncoming> mine = new CopyOnWriteArrayList<>();
            rig.receiver(0, KvTransferGpuTest.decodeBlocks(layout, layout, new int[] {5}, 16, true), KvOptions.DEFAULT, mine::add);
            sender.send(new KvRequest("self", 0, 16, new int[] {5}, KvRig.seconds(60))).allReady().done().get(60, TimeUnit.SECONDS);
            assertFalse(mine.get(0).signalsLayersOnDevice());
        }
    }

    private static Backend twoGpus() {
        Backend b = KvTransferGpuTest.nccl();
        assumeTrue(b.deviceCount() >= 2, "device-side layer signals go between two GPUs");
        KvTransferGpuTest.assumePath(b, KvPathKind.LSA_KERNEL);
        return b;
    }

    private static byte[] bytes(Buffer b) {
        ByteBuffer direct = ByteBuffer.allocateDirect((int) b.byteSize());
        b.read(0, direct);
        byte[] out = new byte[direct.capacity()];
        direct.get(0, out);
        return out;
    }
}
