package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.host.HostTesting.floats;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.host.HostNetwork.Refusal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Connections to a unique id's root and to a rank's data port that never authenticate: they may send only a few
 * bytes and have a short time to present the token; the real ranks form their communicator regardless.
 */
class HostHandshakeTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        System.clearProperty("jccl.host.handshakeTimeout");
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    /** A network id whose root listens in this JVM, and rank 1 joining it (so its data port is open). */
    private record Joining(UniqueId id, InetSocketAddress root, InetSocketAddress rank1Data, CompletableFuture<Communicator> rank1) {
    }

    private Joining rankOneJoins() {
        byte[] bytes = new HostDriver().newNetworkUniqueId();
        BootstrapRoot root = BootstrapRoot.find(HostUniqueId.decode(bytes));
        UniqueId id = UniqueId.fromBytes(bytes);
        CompletableFuture<Communicator> rank1 = host().initRank(id, 2, 1, -1);
        await().atMost(Duration.ofSeconds(30)).until(() -> root.joinedAddresses().containsKey(1));
        return new Joining(id, root.id().address(), root.joinedAddresses().get(1), rank1);
    }

    /** Rank 0 joins too; both ranks all-reduce and get the right sum. */
    private void rankZeroJoinsAndTheyReduce(Joining j) throws Exception {
        Communicator rank0 = host().initRank(j.id(), 2, 0, -1).get(30, TimeUnit.SECONDS);
        opened.add(rank0);
        Communicator rank1 = j.rank1().get(30, TimeUnit.SECONDS);
        opened.add(rank1);
        List<Buffer> buffers = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        for (Communicator c : List.of(rank0, rank1)) {
            Buffer b = floats(1 + c.rank(), 10);
            opened.add(b);
            buffers.add(b);
            works.add(c.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
        for (Buffer b : buffers) assertArrayEquals(new float[] {3f, 20f}, read(b));
    }

    private static Socket connect(InetSocketAddress to) throws IOException {
        Socket s = new Socket(to.getAddress(), to.getPort());
        s.setSoTimeout(10_000);
        return s;
    }

    @Test
    void aFrameOverTheHandshakeLimitIsRefusedOnItsLengthAlone() throws Exception {
        long oversized = HostNetwork.refusals(Refusal.OVERSIZED_FRAME);
        long timedOut = HostNetwork.refusals(Refusal.HANDSHAKE_TIMEOUT);
        Joining j = rankOneJoins();
        // 2000 bytes: far below the 1 MiB data-frame limit, over the 256 allowed before the token is shown.
        byte[] header = ByteBuffer.allocate(4).putInt(2000).array();
        for (InetSocketAddress port : List.of(j.root(), j.rank1Data())) {
            try (Socket s = connect(port)) {
                s.getOutputStream().write(header);
                s.getOutputStream().flush();
                assertEquals(-1, s.getInputStream().read(), "closed at once, without an answer: " + port);
            }
        }
        // Counted as oversized, not as silent: the 10 s handshake timeout had no part in it.
        await().atMost(Duration.ofSeconds(5)).until(() -> HostNetwork.refusals(Refusal.OVERSIZED_FRAME) == oversized + 2);
        assertEquals(timedOut, HostNetwork.refusals(Refusal.HANDSHAKE_TIMEOUT));
        assertFalse(j.rank1().isDone(), "the joining rank is unharmed");
        rankZeroJoinsAndTheyReduce(j);
    }

    @Test
    void silentConnectionsAreDroppedAfterTheHandshakeTimeoutWhileARealRankJoins() throws Exception {
        System.setProperty("jccl.host.handshakeTimeout", "1s");
        long timedOut = HostNetwork.refusals(Refusal.HANDSHAKE_TIMEOUT);
        Joining j = rankOneJoins();
        long start = System.nanoTime();
        try (Socket toRoot = connect(j.root()); Socket toData = connect(j.rank1Data())) {
            // The root says why before it closes: a REJECT frame with the reason.
            DataInputStream in = new DataInputStream(toRoot.getInputStream());
            byte[] reject = new byte[in.readInt()];
            in.readFully(reject);
            assertEquals(Wire.REJECT, reject[0]);
            String why = new String(reject, 1, reject.length - 1, StandardCharsets.UTF_8);
            assertTrue(why.contains("no JOIN within"), why);
            assertEquals(-1, in.read());
            assertEquals(-1, toData.getInputStream().read(), "the data port drops a silent connection too");
        }
        assertTrue(System.nanoTime() - start >= TimeUnit.SECONDS.toNanos(1), "not before the timeout");
        await().atMost(Duration.ofSeconds(5)).until(() -> HostNetwork.refusals(Refusal.HANDSHAKE_TIMEOUT) == timedOut + 2);
        // Rank 1 has waited at the root longer than the handshake timeout: having presented the token, it stays.
        assertFalse(j.rank1().isDone());
        rankZeroJoinsAndTheyReduce(j);
    }
}
