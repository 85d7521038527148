package org.jccl.device.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Stream;
import org.jccl.core.spi.Feature;
import org.jccl.rma.kv.KvBlockPool;
import org.jccl.rma.kv.KvDelivered;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvReceived;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvRig;
import org.jccl.rma.kv.KvSend;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * KV transfers on GPUs, one process: on one GPU a rank into its own pool, on two GPUs rank 0 into rank 1's, over each
 * path the loaded NCCL offers; every byte checked against the layout's oracle. Mismatched block sizes and a head share
 * on the two-GPU runs.
 */
@Tag("gpu")
class KvTransferGpuTest {
    /** A Llama-3-8B-shaped layer set, cut down to 4 layers and a pool of 64 blocks. */
    static KvLayout.Builder model() {
        return KvLayout.builder().layers(4).tensors(2).blocks(64).tokensPerBlock(16).kvHeads(8).headDim(128).type(DataType.BFLOAT16);
    }

    static Backend nccl() {
        Backend b = Jccl.backend(BackendKind.NCCL);
        assumeTrue(b.features().has(Feature.COMM_WINDOW_REGISTER), "KV pools need windows: " + b.describe());
        return b;
    }

    static void assumePath(Backend b, KvPathKind path) {
        if (path == KvPathKind.PUT_SIGNAL) assumeTrue(b.features().has(Feature.PUT_SIGNAL), "ncclPutSignal needs NCCL 2.29.2+");
        if (path == KvPathKind.LSA_KERNEL) assumeTrue(b.features().has(Feature.DEV_COMM_CREATE), "the device API needs NCCL 2.28+");
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"LSA_KERNEL", "COPY", "PUT_SIGNAL"})
    void oneGpuIntoItsOwnPool(KvPathKind path) throws Exception {
        Backend b = nccl();
        assumePath(b, path);
        KvLayout layout = model().build();
        try (KvRig rig = new KvRig(b, List.of(layout), 8 << 20)) {
            check(rig, 0, 0, layout, layout, path, 200);
        }
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"LSA_KERNEL", "COPY", "PUT_SIGNAL", "SEND_RECV"})
    void twoGpusWithOtherBlockSizes(KvPathKind path) throws Exception {
        Backend b = nccl();
        assumeTrue(b.deviceCount() >= 2, "needs 2 GPUs");
        assumePath(b, path);
        KvLayout prefill = model().build();
        KvLayout decode = model().tokensPerBlock(32).blocks(40).build();
        try (KvRig rig = new KvRig(b, List.of(prefill, decode), 8 << 20)) {
            check(rig, 0, 1, prefill, decode, path, 700);
        }
    }

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"LSA_KERNEL", "SEND_RECV"})
    void twoGpusWhereDecodeHoldsHalfTheHeads(KvPathKind path) throws Exception {
        Backend b = nccl();
        assumeTrue(b.deviceCount() >= 2, "needs 2 GPUs");
        assumePath(b, path);
        KvLayout prefill = model().build();
        KvLayout decode = model().kvHeads(4).headOffset(4).build();
        try (KvRig rig = new KvRig(b, List.of(prefill, decode), 8 << 20)) {
            check(rig, 0, 1, prefill, decode, path, 333);
        }
    }

    /**
     * Both pools in the model's symmetric window, past a buffer allocated there first (so not at its start): each path
     * lands every byte, and the LSA path's layer signals reach decode's stream.
     */
    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"LSA_KERNEL", "PUT_SIGNAL", "SEND_RECV"})
    void twoGpusWithPoolsInTheModelsSymmetricWindow(KvPathKind path) throws Exception {
        Backend b = nccl();
        assumeTrue(b.deviceCount() >= 2, "needs 2 GPUs");
        assumePath(b, path);
        KvLayout prefill = model().build();
        KvLayout decode = model().tokensPerBlock(32).blocks(40).build();
        try (KvRig rig = KvRig.inSymmetricPools(b, List.of(prefill, decode), 8 << 20, 1 << 20)) {
            for (KvPool p : rig.pools) assertEquals(1 << 20, p.windowBase());
            check(rig, 0, 1, prefill, decode, path, 700);
        }
    }

    /**
     * Decode's block allocator; into the sender's own pool ({@code self}), one that hands out only blocks the source
     * does not use.
     */
    static KvBlockPool decodeBlocks(KvLayout s, KvLayout d, int[] src, int tokens, boolean self) {
        KvBlockPool blocks = new KvBlockPool(d.blocks());
        if (self) {
            List<Integer> others = new ArrayList<>();
            for (int i = 0; i < s.blocks(); i++) others.add(i);
            for (int b : src) others.remove(Integer.valueOf(b));
            Collections.shuffle(others, new Random(4));
            blocks.allocate(s.blocks()); // then hand back only blocks the source does not use: decode gets those
            blocks.free(others.subList(0, d.blocksFor(tokens)).stream().mapToInt(Integer::intValue).toArray());
        }
        return blocks;
    }

    /** Sends one request of {@code tokens} tokens from {@code from} to {@code to}; every byte must be where the oracle says. */
    static void check(KvRig rig, int from, int to, KvLayout s, KvLayout d, KvPathKind path, int tokens) throws Exception {
        rig.fill(from, 11);
        if (to != from) rig.zero(to);
        byte[] source = rig.pool(from);
        List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
        int[] src = KvRig.randomBlocks(new Random(3), s.blocksFor(tokens), s.blocks());
        rig.receiver(to, decodeBlocks(s, d, src, tokens, to == from), KvOptions.DEFAULT, arrived::add);
        KvSend send = rig.sender(from, KvOptions.builder().path(path).build())
                .send(new KvRequest("gpu", to, tokens, src, KvRig.seconds(60))).allReady();
        KvDelivered delivered = send.done().get(120, TimeUnit.SECONDS);
        KvReceived received = arrived.get(0).done().get(60, TimeUnit.SECONDS);
        assertEquals(path, delivered.path());
        assertEquals(0, KvRig.wrongBytes(s, source, src, d, rig.pool(to), received.blocks(), tokens));
        KvIncoming in = arrived.get(0);
        if (in.signalsLayersOnDevice()) { // every layer's device signal landed where decode's waits read it
            try (Stream decodeStream = rig.pools.get(to).communicator().backend().createStream(rig.pools.get(to).communicator().device())) {
                for (int l = 0; l < d.layers(); l++) in.layerOn(l, decodeStream);
                decodeStream.marker().get(60, TimeUnit.SECONDS);
            }
        }
        rig.allReduceWorks();
    }
}
