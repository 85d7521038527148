package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.host.HostTesting.failure;
import static org.jccl.core.host.HostTesting.floats;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.RemoteErrorException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.UniqueId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The network transport with its ranks as threads of this JVM (ids that force TCP): results, failures, limits. */
class NetworkCliqueTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    private List<Communicator> networkRanks(int n) throws Exception {
        return join(UniqueId.fromBytes(new HostDriver().newNetworkUniqueId()), n);
    }

    @Test
    void everyOperationMatchesTheInJvmBackendBitForBit() throws Exception {
        int n = 3;
        List<Communicator> comms = networkRanks(n);
        Backend h = host();
        List<CompletableFuture<Integer>> checks = new ArrayList<>();
        for (Communicator c : comms) {
            checks.add(CompletableFuture.supplyAsync(() -> {
                try {
                    List<Communicator> reference = h.initAll(n).get(30, TimeUnit.SECONDS);
                    try {
                        return OpSuite.check(h, c, reference);
                    } finally {
                        for (Communicator rc : reference) rc.close();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (CompletableFuture<Integer> f : checks) assertEquals(OpSuite.cases().size(), f.get(120, TimeUnit.SECONDS));
    }

    private List<Communicator> join(UniqueId id, int n) throws Exception {
        List<Communicator> comms = HostTesting.join(id, n);
        opened.addAll(comms);
        return comms;
    }

    private void allReduceWorks(List<Communicator> comms) throws Exception {
        List<Buffer> sends = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            Buffer b = floats(1 + c.rank(), 10);
            opened.add(b);
            sends.add(b);
            works.add(c.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
        float first = comms.size() * (comms.size() + 1) / 2f;
        for (Buffer b : sends) assertArrayEquals(new float[] {first, 10f * comms.size()}, read(b));
    }

    /** The same id with one token byte changed: same root address, wrong secret. */
    private static UniqueId forged(UniqueId id) {
        byte[] b = id.toBytes();
        b[30] ^= 1;
        return UniqueId.fromBytes(b);
    }

    @Test
    void aRankWithAWrongTokenIsRefusedAndTheRealRanksStillForm() throws Exception {
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        Throwable refused = failure(host().initRank(forged(id), 2, 1, -1));
        assertInstanceOf(InvalidUsageException.class, refused);
        assertTrue(refused.getMessage().contains("token does not match"), refused.getMessage());
        allReduceWorks(join(id, 2));
    }

    @Test
    void garbageAndOversizedFramesToTheRootAreRefusedWithoutHarm() throws Exception {
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        InetSocketAddress root = HostUniqueId.decode(id.toBytes()).address();
        try (Socket oversized = new Socket(root.getAddress(), root.getPort());
             Socket fuzzed = new Socket(root.getAddress(), root.getPort())) {
            OutputStream o = oversized.getOutputStream();
            o.write(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3});
            o.flush();
            byte[] noise = new byte[300];
            new java.util.Random(42).nextBytes(noise);
            noise[0] = 0;
            noise[1] = 0;
            noise[2] = 0;
            noise[3] = 40;
            fuzzed.getOutputStream().write(noise);
            fuzzed.getOutputStream().flush();
            // The root closes both connections and stays open for the real ranks.
            assertEquals(-1, oversized.getInputStream().read());
            fuzzed.getInputStream().readAllBytes();
        }
        allReduceWorks(join(id, 2));
    }

    @Test
    void garbageAndOversizedFramesToAJoiningRanksDataPortAreRefusedWithoutHarm() throws Exception {
        byte[] idBytes = new HostDriver().newNetworkUniqueId();
        UniqueId id = UniqueId.fromBytes(idBytes);
        BootstrapRoot root = BootstrapRoot.find(HostUniqueId.decode(idBytes));
        CompletableFuture<Communicator> rank1 = host().initRank(id, 2, 1, -1);
        await().atMost(Duration.ofSeconds(30)).until(() -> root.joinedAddresses().containsKey(1));
        InetSocketAddress data = root.joinedAddresses().get(1);
        try (Socket oversized = new Socket(data.getAddress(), data.getPort());
             Socket wrongToken = new Socket(data.getAddress(), data.getPort())) {
            oversized.getOutputStream().write(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 9, 9});
            oversized.getOutputStream().flush();
            // A well-framed HELLO with a wrong token, claiming to be rank 0.
            java.nio.ByteBuffer hello = java.nio.ByteBuffer.allocate(4 + HelloHandler.HELLO_BYTES);
            hello.putInt(HelloHandler.HELLO_BYTES).put(Wire.HELLO).put(new byte[HostUniqueId.TOKEN_BYTES]).putInt(0).putInt(2);
            wrongToken.getOutputStream().write(hello.array());
            wrongToken.getOutputStream().flush();
            assertEquals(-1, oversized.getInputStream().read());
            assertEquals(-1, wrongToken.getInputStream().read());
        }
        assertFalse(rank1.isDone(), "the joining rank is unharmed and still waits for rank 0");
        CompletableFuture<Communicator> rank0 = host().initRank(id, 2, 0, -1);
        List<Communicator> comms = List.of(rank0.get(30, TimeUnit.SECONDS), rank1.get(30, TimeUnit.SECONDS));
        opened.addAll(comms);
        allReduceWorks(comms);
    }

    /** Two ranks made at the driver level, so the test reaches their transports. */
    private List<HostComm> driverRanks(int n) throws Exception {
        HostDriver driver = new HostDriver();
        byte[] id = driver.newNetworkUniqueId();
        List<CompletableFuture<HostComm>> joining = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            joining.add(CompletableFuture.supplyAsync(() -> (HostComm) driver.initRank(n, id, rank, -1, CommConfig.DEFAULT)));
        }
        List<HostComm> comms = new ArrayList<>();
        for (CompletableFuture<HostComm> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        for (HostComm c : comms) opened.add(c::destroy);
        return comms;
    }

    @Test
    void aMalformedFrameFailsThatCliqueOnlyAndNeverTheProcess() throws Exception {
        List<HostComm> oversized = driverRanks(2);
        List<HostComm> fuzzed = driverRanks(2);
        List<Communicator> bystanders = networkRanks(2);
        Channel toRank1 = ((NetworkClique) oversized.get(0).transport()).channelTo(1);
        // Written below the framing codec: a length prefix far over the limit.
        toRank1.pipeline().firstContext().writeAndFlush(Unpooled.buffer().writeInt(Wire.MAX_FRAME + 1).writeLong(7));
        Channel fuzzTo1 = ((NetworkClique) fuzzed.get(0).transport()).channelTo(1);
        ByteBuf unknownType = Unpooled.buffer().writeByte(99).writeLong(12345);
        fuzzTo1.writeAndFlush(unknownType);
        for (List<HostComm> clique : List.of(oversized, fuzzed)) {
            for (HostComm c : clique) {
                await().atMost(Duration.ofSeconds(10)).until(() -> c.asyncError() == Errors.REMOTE_ERROR);
            }
        }
        assertTrue(oversized.get(1).lastError().contains("TooLongFrameException"), oversized.get(1).lastError());
        assertTrue(fuzzed.get(1).lastError().contains("malformed frame"), fuzzed.get(1).lastError());
        allReduceWorks(bystanders);
    }

    @Test
    void anAbortFailsThePeersPendingWorkWithRemoteError() throws Exception {
        List<Communicator> comms = networkRanks(2);
        Buffer b = floats(1, 2);
        opened.add(b);
        Work pending = comms.get(1).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM);
        comms.get(0).abort().get(30, TimeUnit.SECONDS);
        Throwable why = failure(pending);
        assertInstanceOf(RemoteErrorException.class, why);
        assertTrue(why.getMessage().contains("rank 0 failed"), why.getMessage());
        assertFalse(comms.get(1).isOpen());
    }

    @Test
    void splitMakesSubCommunicatorsAndShrinkIsRefusedClearly() throws Exception {
        List<Communicator> comms = networkRanks(3);
        List<CompletableFuture<Communicator>> splitting = new ArrayList<>();
        for (Communicator c : comms) splitting.add(c.split(c.rank() % 2, -c.rank()));
        List<Communicator> subs = new ArrayList<>();
        for (CompletableFuture<Communicator> f : splitting) subs.add(f.get(30, TimeUnit.SECONDS));
        opened.addAll(subs);
        // Color 0 holds ranks 0 and 2, ordered by key -rank: rank 2 first.
        assertEquals(List.of(1, 0, 0), subs.stream().map(Communicator::rank).toList());
        assertEquals(List.of(2, 1, 2), subs.stream().map(Communicator::size).toList());
        allReduceWorks(List.of(subs.get(0), subs.get(2)));
        allReduceWorks(List.of(subs.get(1)));
        for (Communicator c : comms) {
            Throwable why = failure(c.shrink(new int[] {(c.rank() + 1) % 3}, CommConfig.DEFAULT, org.jccl.core.CommOptions.defaults()));
            assertInstanceOf(InvalidUsageException.class, why);
            assertTrue(why.getMessage().contains("several processes"), why.getMessage());
        }
        allReduceWorks(comms);
    }

    @Test
    void destroyingARankClosesItsConnectionsAndItsPeersSeeANormalLeave() throws Exception {
        List<HostComm> comms = driverRanks(3);
        List<Channel> channels = new ArrayList<>();
        for (HostComm c : comms) {
            NetworkClique clique = (NetworkClique) c.transport();
            for (int peer = 0; peer < 3; peer++) if (peer != c.rank()) channels.add(clique.channelTo(peer));
        }
        for (HostComm c : comms) c.destroy();
        for (Channel ch : channels) assertTrue(ch.closeFuture().await(10, TimeUnit.SECONDS), ch + " is still open");
        for (HostComm c : comms) {
            assertTrue(((NetworkClique) c.transport()).isClosed());
            // A normal close is no failure: no rank saw a lost connection.
            assertEquals(Errors.SUCCESS, c.asyncError(), c.lastError());
        }
    }
}
