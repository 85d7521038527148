package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.rma.SymmetricPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * KV pools carved out of a {@link SymmetricPool} (not at its start): transfers land byte for byte on every path, the
 * collective buffers beside them keep working, closing gives the range back, and ranks whose pools disagree fail typed.
 */
class KvSymmetricPoolHostTest {
    private static final long BEFORE = 4096 + 256; // a collective buffer allocated first: the KV pool is not at offset 0
    final Backend host = Jccl.backend(BackendKind.HOST);

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"COPY", "PUT_SIGNAL", "SEND_RECV"})
    void aRequestLandsByteForByteInAPoolThatSharesTheModelsWindow(KvPathKind path) throws Exception {
        KvLayout prefill = KvRig.small().tokensPerBlock(4).build();
        KvLayout decode = KvRig.small().tokensPerBlock(8).blocks(12).build();
        try (KvRig rig = KvRig.inSymmetricPools(host, List.of(prefill, decode), 2048, BEFORE)) {
            for (int r = 0; r < 2; r++) {
                assertEquals(BEFORE, rig.pools.get(r).windowBase(), "after the buffer allocated first");
                assertSame(rig.symmetric.get(r).window(), rig.pools.get(r).window(), "no window of its own");
            }
            rig.fill(0, 3);
            rig.zero(1);
            byte[] source = rig.pool(0);
            List<KvIncoming> arrived = new CopyOnWriteArrayList<>();
            rig.receiver(1, new KvBlockPool(decode.blocks()), KvOptions.DEFAULT, arrived::add);
            KvSender sender = rig.sender(0, KvOptions.builder().path(path).build());
            int tokens = 27;
            int[] from = KvRig.randomBlocks(new Random(11), prefill.blocksFor(tokens), prefill.blocks());
            KvSend send = sender.send(new KvRequest("r1", 1, tokens, from, KvRig.seconds(30)));
            send.allReady();
            assertEquals(path, send.done().get(30, TimeUnit.SECONDS).path());
            KvReceived received = arrived.get(0).done().get(30, TimeUnit.SECONDS);
            assertEquals(0, KvRig.wrongBytes(prefill, source, from, decode, rig.pool(1), received.blocks(), tokens));
            allReduceOn(rig.comms, rig.decoys); // the model's buffer in the same window
        }
    }

    @Test
    void closingTheKvPoolGivesItsRangeBackToTheSymmetricPool() throws Exception {
        KvLayout layout = KvRig.small().build();
        try (KvRig rig = KvRig.inSymmetricPools(host, List.of(layout, layout), 1024, BEFORE)) {
            SymmetricPool symmetric = rig.symmetric.get(0);
            long whileOpen = symmetric.freeBytes();
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (KvPool p : rig.pools) closing.add(p.closeAsync());
            for (CompletableFuture<Void> c : closing) c.get(30, TimeUnit.SECONDS);
            assertEquals(symmetric.byteSize() - SymmetricPool.bytesFor(BEFORE), symmetric.freeBytes(),
                    "everything but the buffer allocated first is free again (was " + whileOpen + ")");
            allReduceOn(rig.comms, rig.decoys); // the window stays registered for the model
        }
    }

    @Test
    void ranksWhoseSymmetricPoolsPlaceTheKvPoolAtDifferentOffsetsAllFailTyped() throws Exception {
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        List<SymmetricPool> pools = SymmetricPool.createAll(comms, 1 << 20).get(30, TimeUnit.SECONDS);
        Buffer onlyOnRankZero = pools.get(0).allocate(4096); // rank 1 allocates nothing first: the offsets differ
        KvLayout layout = KvRig.small().build();
        List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
        for (int r = 0; r < 2; r++) allocating.add(KvPool.allocate(pools.get(r), layout, 1024));
        for (int r = 0; r < 2; r++) {
            CompletableFuture<KvPool> f = allocating.get(r);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertInstanceOf(InvalidUsageException.class, e.getCause(), "rank " + r);
        }
        onlyOnRankZero.close();
        for (SymmetricPool p : pools) assertEquals(p.byteSize(), p.freeBytes(), "the failed allocation was given back");
        closeAll(pools, comms);
    }

    @Test
    void aSymmetricPoolWithoutRoomFailsTypedOnEveryRank() throws Exception {
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        List<SymmetricPool> pools = SymmetricPool.createAll(comms, 4096).get(30, TimeUnit.SECONDS);
        KvLayout layout = KvRig.small().build();
        List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
        for (int r = 0; r < 2; r++) allocating.add(KvPool.allocate(pools.get(r), layout, 1024));
        for (CompletableFuture<KvPool> f : allocating) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertInstanceOf(InvalidUsageException.class, e.getCause());
        }
        closeAll(pools, comms);
    }

    /** Closes the pools together (each close is collective), then the communicators. */
    private static void closeAll(List<SymmetricPool> pools, List<Communicator> comms) throws Exception {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (SymmetricPool p : pools) closing.add(p.closeAsync());
        for (CompletableFuture<Void> c : closing) c.get(30, TimeUnit.SECONDS);
        for (Communicator c : comms) c.close();
    }

    /** An all-reduce over one float at the start of each rank's buffer: rank r contributes r + 1. */
    private static void allReduceOn(List<Communicator> comms, List<Buffer> buffers) throws Exception {
        List<CompletableFuture<Void>> works = new ArrayList<>();
        for (int r = 0; r < comms.size(); r++) {
            buffers.get(r).write(0, new float[] {r + 1});
            works.add(comms.get(r).allReduce(buffers.get(r), buffers.get(r), 1, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (CompletableFuture<Void> w : works) w.get(30, TimeUnit.SECONDS);
        float sum = comms.size() * (comms.size() + 1) / 2f;
        for (Buffer b : buffers) assertArrayEquals(new float[] {sum}, b.readFloats(0, 1));
    }
}
