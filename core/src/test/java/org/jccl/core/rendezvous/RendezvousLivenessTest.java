package org.jccl.core.rendezvous;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Heartbeats and death: the server learns which ranks died; clients learn that the server did. */
class RendezvousLivenessTest {
    private RendezvousServer server;
    private RendezvousClient witness;

    @BeforeEach
    void start() {
        server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(4).build());
        witness = TestServers.connect(server, 0, 4);
    }

    @AfterEach
    void stop() {
        witness.close();
        server.close();
    }

    @Test
    void aConnectionThatEndsWithoutLeavingMakesItsRankDeadAndIsAnnounced() throws IOException {
        Set<Integer> heard = ConcurrentHashMap.newKeySet();
        witness.onRankDead(heard::add);
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 2, 4).type());
            await().atMost(Duration.ofSeconds(5)).until(() -> server.liveRanks().contains(2));
        } // closed without LEAVE, as a killed process's socket is
        await().atMost(Duration.ofSeconds(5)).until(() -> server.deadRanks().equals(Set.of(2)));
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.equals(Set.of(2)));
        assertEquals(Set.of(2), witness.announcedDeadRanks());
        assertEquals(Set.of(2), witness.deadRanksNow());
        assertEquals(Set.of(0), server.liveRanks());
        // A restarted rank 2 may join again and is alive once more.
        try (RendezvousClient again = TestServers.connect(server, 2, 4)) {
            assertEquals(Set.of(), again.deadRanksNow());
        }
    }

    @Test
    void aSilentRankIsDeclaredDeadAfterTheConfiguredTime() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 3, 4).type());
            // No heartbeats: the server must give up on it after deadAfter (2 s).
            await().atMost(Duration.ofSeconds(8)).until(() -> server.deadRanks().contains(3));
            assertTrue(peer.closedByServer());
        }
    }

    @Test
    void heartbeatsKeepAnIdleClientAlive() {
        try (RendezvousClient idle = TestServers.connect(server, 1, 4)) {
            // Longer than deadAfter (2 s) without a request: only heartbeats keep it alive.
            await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(4))
                    .until(() -> idle.isConnected() && server.liveRanks().contains(1));
            assertEquals(Set.of(), server.deadRanks());
        }
    }

    @Test
    void aClosedServerFailsPendingOperations() {
        CompletableFuture<byte[]> pending = witness.get("never", Duration.ofSeconds(30));
        server.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> pending.get(10, TimeUnit.SECONDS));
        assertInstanceOf(RendezvousException.class, e.getCause());
        await().atMost(Duration.ofSeconds(5)).until(() -> witness.disconnected().isDone());
        assertFalse(witness.isConnected());
        assertThrows(RendezvousException.class, () -> witness.setNow("k", new byte[0]));
    }

    @Test
    void aSilentServerIsDetected() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // A server that knows the secret, admits the client, then never speaks again.
            CompletableFuture<Socket> admitted = CompletableFuture.supplyAsync(() -> admitAndFallSilent(fake));
            RendezvousOptions options = TestServers.serverOptions().port(fake.getLocalPort()).rank(1).build();
            try (RendezvousClient client = RendezvousClient.connectNow(options);
                 Socket unused = admitted.get(10, TimeUnit.SECONDS)) {
                CompletableFuture<byte[]> pending = client.get("k", Duration.ofSeconds(30));
                ExecutionException e = assertThrows(ExecutionException.class, () -> pending.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause().getMessage().contains("silent"), e.getCause().getMessage());
                assertFalse(client.isConnected());
            }
        }
    }

    private static Socket admitAndFallSilent(ServerSocket fake) {
        try {
            Socket s = fake.accept();
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] serverNonce = Handshake.nonce();
            out.write(RawPeer.frameBytes(MessageType.CHALLENGE.code, 0,
                    new PayloadWriter().u8(Handshake.VERSION).raw(serverNonce).toByteArray()));
            int length = in.readInt();
            byte[] join = new byte[length];
            in.readFully(join);
            PayloadReader r = new PayloadReader(java.util.Arrays.copyOfRange(join, Frame.HEADER_BYTES, join.length));
            int rank = r.i32();
            r.i32();
            byte[] clientNonce = r.raw(Handshake.NONCE_BYTES);
            byte[] proof = Handshake.serverProof(TestServers.SECRET_BYTES, serverNonce, clientNonce, rank);
            out.write(RawPeer.frameBytes(MessageType.JOINED.code, 0, proof));
            out.flush();
            return s;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
