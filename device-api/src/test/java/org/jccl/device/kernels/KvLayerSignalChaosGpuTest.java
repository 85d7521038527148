package org.jccl.device.kernels;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvRig;
import org.jccl.rma.kv.KvSend;
import org.jccl.rma.kv.KvSender;
import org.jccl.rma.kv.KvTransferException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Device-side layer signals under chaos, GPU 0 into GPU 1 (one process): requests whose every layer decode's
 * stream waits for on the device are cancelled from either side, run out of their deadline, get only some layers, or
 * complete, at random points. Every wait on decode's stream must pass, every request must end (done, or a typed
 * failure), and afterwards a request has device signals again: every wait was given back.
 */
@Tag("gpu")
class KvLayerSignalChaosGpuTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int REQUESTS = Integer.getInteger("jccl.kvSignalChaos.requests", 120);

    private enum Fate { COMPLETE, SENDER_CANCELS, RECEIVER_CANCELS, DEADLINE, SOME_LAYERS_THEN_CANCEL }

    @Test
    void everyWaitPassesEveryRequestEndsAndEveryRowComesBack() throws Exception {
        Backend b = KvTransferGpuTest.nccl();
        assumeTrue(b.deviceCount() >= 2, "device-side layer signals go between two GPUs");
        KvTransferGpuTest.assumePath(b, KvPathKind.LSA_KERNEL);
        KvLayout layout = KvTransferGpuTest.model().layers(4).blocks(1024).build();
        long seed = Long.getLong("jccl.chaos.seed", System.nanoTime());
        Random random = new Random(seed);
        String why = "seed " + seed + " (-Djccl.chaos.seed to repeat)";
        try (KvRig rig = new KvRig(b, List.of(layout, layout), 0);
             Stream decodeStream = b.createStream(rig.comms.get(1).device())) {
            Map<String, KvIncoming> arrived = new ConcurrentHashMap<>();
            List<Work> passed = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(layout.blocks()), KvOptions.DEFAULT, in -> {
                if (in.signalsLayersOnDevice()) {
                    for (int l = 0; l < in.layerCount(); l++) in.layerOn(l, decodeStream);
                    passed.add(decodeStream.marker());
                }
                arrived.put(in.request(), in);
            });
            KvSender sender = rig.sender(0, KvOptions.builder().path(KvPathKind.LSA_KERNEL).build());
            List<KvSend> sends = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                Fate fate = Fate.values()[random.nextInt(Fate.values().length)];
                String name = "chaos-" + i;
                int source = random.nextInt(layout.blocks());
                Duration deadline = fate == Fate.DEADLINE ? Duration.ofMillis(1 + random.nextInt(20)) : KvRig.seconds(60);
                KvSend send = sender.send(new KvRequest(name, 1, 1 + random.nextInt(16), new int[] {source}, deadline));
                sends.add(send);
                switch (fate) {
                    case COMPLETE -> send.allReady();
                    case SENDER_CANCELS -> {
                        if (random.nextBoolean()) send.ready(0);
                        send.cancel();
                    }
                    case RECEIVER_CANCELS -> {
                        await().atMost(WAIT).until(() -> arrived.containsKey(name));
                        if (random.nextBoolean()) send.ready(0);
                        arrived.get(name).cancel();
                    }
                    case DEADLINE -> { } // nothing is ever ready: it ends when the deadline passes
                    case SOME_LAYERS_THEN_CANCEL -> {
                        int ready = random.nextInt(layout.layers());
                        for (int l = 0; l < ready; l++) send.ready(l);
                        if (random.nextBoolean()) {
                            send.cancel();
                        } else {
                            await().atMost(WAIT).until(() -> arrived.containsKey(name));
                            arrived.get(name).cancel();
                        }
                    }
                }
            }
            for (KvSend s : sends) end(s.done(), why);
            for (KvIncoming in : arrived.values()) end(in.done(), why);
            for (Work w : passed) w.get(30, TimeUnit.SECONDS); // every device-side wait passed
            assertTrue(passed.size() > 0, why);
            for (int r = 0; r < 2; r++) assertEquals(0, rig.comms.get(r).pendingCount(), why);

            // Every wait was given back: all of the bound is free, so 32 requests of 4 layers at once all have signals.
            arrived.clear();
            List<KvSend> full = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                full.add(sender.send(new KvRequest("after-" + i, 1, 1, new int[] {i}, KvRig.seconds(60))));
            }
            await().atMost(WAIT).until(() -> arrived.size() == 32);
            assertTrue(arrived.values().stream().allMatch(KvIncoming::signalsLayersOnDevice), why);
            for (KvSend s : full) s.allReady().done().get(60, TimeUnit.SECONDS);
            rig.allReduceWorks();
        }
    }

    /** Waits for a request's end: done, or failed with a {@link KvTransferException}, never anything else. */
    private static void end(java.util.concurrent.CompletableFuture<?> done, String why) throws Exception {
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertInstanceOf(KvTransferException.class, e.getCause(), why);
        }
        assertTrue(done.isDone(), why);
    }
}
