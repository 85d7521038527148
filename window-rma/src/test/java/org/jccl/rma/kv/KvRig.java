package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.rma.SymmetricPool;

/**
 * Host ranks of one JVM with a KV pool each: rank layouts, pools filled with seeded bytes, and an oracle for what a
 * request must leave in a destination pool, written from the layout's definition (token by token, head by head),
 * independently of the transfer's segments. Closes everything it opened.
 */
public final class KvRig implements AutoCloseable {
    final Backend host;
    public final List<Communicator> comms;
    public final List<KvPool> pools = new ArrayList<>();
    final List<KvSender> senders = new CopyOnWriteArrayList<>();
    final List<KvReceiver> receivers = new CopyOnWriteArrayList<>();
    /** The symmetric pools the KV pools lie in, when made by {@link #inSymmetricPools}; closed after them. */
    final List<SymmetricPool> symmetric = new ArrayList<>();
    /** Buffers allocated in the symmetric pools before the KV pools. */
    public final List<Buffer> decoys = new ArrayList<>();

    public KvRig(List<KvLayout> layouts, long stagingBytes) throws Exception {
        this(Jccl.backend(BackendKind.HOST), layouts, stagingBytes);
    }

    /** Ranks of {@code backend} in this process (rank i on GPU i on GPU backends), one pool of each layout. */
    public KvRig(Backend backend, List<KvLayout> layouts, long stagingBytes) throws Exception {
        this(backend, layouts.size(), rig -> {
            List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
            for (int r = 0; r < layouts.size(); r++) allocating.add(KvPool.allocate(rig.comms.get(r), layouts.get(r), stagingBytes));
            return allocating;
        });
    }

    /**
     * Ranks of {@code backend} in this process whose KV pools lie in a {@link SymmetricPool} each, after an allocation
     * of {@code before} bytes there (so not at offset 0), which stays allocated beside them.
     */
    public static KvRig inSymmetricPools(Backend backend, List<KvLayout> layouts, long stagingBytes, long before)
            throws Exception {
        return new KvRig(backend, layouts.size(), rig -> {
            long bytes = before + roomFor(layouts, stagingBytes);
            rig.symmetric.addAll(SymmetricPool.createAll(rig.comms, bytes).get(120, TimeUnit.SECONDS));
            List<CompletableFuture<KvPool>> allocating = new ArrayList<>();
            for (int r = 0; r < layouts.size(); r++) {
                rig.decoys.add(rig.symmetric.get(r).allocate(before));
                allocating.add(KvPool.allocate(rig.symmetric.get(r), layouts.get(r), stagingBytes));
            }
            return allocating;
        });
    }

    /** How the rig's pools are allocated, once its communicators exist. */
    private interface Pools {
        List<CompletableFuture<KvPool>> allocate(KvRig rig) throws Exception;
    }

    private KvRig(Backend backend, int ranks, Pools pools) throws Exception {
        host = backend;
        comms = host.initAll(ranks).get(60, TimeUnit.SECONDS);
        for (CompletableFuture<KvPool> f : pools.allocate(this)) this.pools.add(f.get(120, TimeUnit.SECONDS));
    }

    /** Generous room for the largest rank's pool, staging, alignment and signals. */
    static long roomFor(List<KvLayout> layouts, long stagingBytes) {
        long largest = 0;
        for (KvLayout l : layouts) largest = Math.max(largest, 2 * (l.poolBytes() + stagingBytes) + (1 << 20));
        return largest;
    }

    /** A small model: 3 layers, K and V, 2 heads of 8 floats: 64 bytes per token and tensor. */
    public static KvLayout.Builder small() {
        return KvLayout.builder().layers(3).tensors(2).blocks(16).tokensPerBlock(4).kvHeads(2).headDim(8).type(DataType.FLOAT32);
    }

    public KvSender sender(int rank, KvOptions options) {
        KvSender s = KvSender.open(pools.get(rank), options);
        senders.add(s);
        return s;
    }

    public KvReceiver receiver(int rank, KvBlockAllocator allocator, KvOptions options, java.util.function.Consumer<KvIncoming> on)
            throws Exception {
        KvReceiver r = KvReceiver.open(pools.get(rank), allocator, options, on).get(30, TimeUnit.SECONDS);
        receivers.add(r);
        return r;
    }

    /** Fills {@code rank}'s pool with bytes from {@code seed}. */
    public void fill(int rank, long seed) {
        fill(pools.get(rank), seed);
    }

    public void zero(int rank) {
        zero(pools.get(rank));
    }

    public byte[] pool(int rank) {
        return bytes(pools.get(rank));
    }

    /** Fills {@code pool} with {@link #seeded} bytes of {@code seed}. */
    public static void fill(KvPool pool, long seed) {
        byte[] bytes = seeded(pool.layout(), seed);
        pool.buffer().write(0, ByteBuffer.allocateDirect(bytes.length).put(bytes).flip());
    }

    /** What {@link #fill} writes into a pool of {@code layout}: a process can know it without seeing the pool. */
    public static byte[] seeded(KvLayout layout, long seed) {
        byte[] bytes = new byte[(int) layout.poolBytes()];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    public static void zero(KvPool pool) {
        pool.buffer().write(0, ByteBuffer.allocateDirect((int) pool.layout().poolBytes()));
    }

    /** A copy of {@code pool}'s bytes. */
    public static byte[] bytes(KvPool pool) {
        Buffer b = pool.buffer();
        ByteBuffer direct = ByteBuffer.allocateDirect((int) b.byteSize());
        b.read(0, direct);
        byte[] out = new byte[direct.capacity()];
        direct.get(0, out);
        return out;
    }

    /**
     * Checks that {@code after} holds, for each of the request's tokens in every layer and tensor, the destination
     * rank's heads of the source row; returns the number of wrong bytes.
     */
    public static long wrongBytes(KvLayout s, byte[] source, int[] sourceBlocks, KvLayout d, byte[] after, int[] destBlocks, int tokens) {
        long wrong = 0;
        long shift = (long) (d.headOffset() - s.headOffset()) * s.headBytes();
        for (int layer = 0; layer < s.layers(); layer++) {
            for (int t = 0; t < s.tensors(); t++) {
                for (int token = 0; token < tokens; token++) {
                    long from = s.offset(layer, t, sourceBlocks[token / s.tokensPerBlock()])
                            + (token % s.tokensPerBlock()) * s.tokenBytes() + shift;
                    long to = d.offset(layer, t, destBlocks[token / d.tokensPerBlock()])
                            + (token % d.tokensPerBlock()) * d.tokenBytes();
                    for (long i = 0; i < d.tokenBytes(); i++) {
                        if (source[(int) (from + i)] != after[(int) (to + i)]) wrong++;
                    }
                }
            }
        }
        return wrong;
    }

    /** Distinct random block ids. */
    public static int[] randomBlocks(Random random, int count, int poolBlocks) {
        List<Integer> all = new ArrayList<>();
        for (int b = 0; b < poolBlocks; b++) all.add(b);
        java.util.Collections.shuffle(all, random);
        int[] out = new int[count];
        for (int i = 0; i < count; i++) out[i] = all.get(i);
        return out;
    }

    /** An all-reduce on every rank, to show the communicator still works. */
    public void allReduceWorks() throws Exception {
        List<Buffer> bufs = new ArrayList<>();
        List<CompletableFuture<?>> works = new ArrayList<>();
        for (Communicator c : comms) {
            Buffer b = host.allocate(c.device(), 4);
            b.write(0, new float[] {1});
            bufs.add(b);
            works.add(c.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM));
        }
        CompletableFuture.allOf(works.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        assertEquals(comms.size(), bufs.get(0).readFloats(0, 1)[0]);
        bufs.forEach(Buffer::close);
    }

    public static Duration seconds(int s) {
        return Duration.ofSeconds(s);
    }

    @Override
    public void close() throws Exception {
        for (KvSender s : senders) s.closeAsync().get(30, TimeUnit.SECONDS);
        for (KvReceiver r : receivers) r.closeAsync().get(30, TimeUnit.SECONDS);
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (KvPool p : pools) closing.add(p.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        for (Buffer b : decoys) b.close();
        List<CompletableFuture<Void>> symmetricClosing = new ArrayList<>();
        for (SymmetricPool p : symmetric) symmetricClosing.add(p.closeAsync());
        CompletableFuture.allOf(symmetricClosing.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        for (Communicator c : comms) c.close();
    }
}
