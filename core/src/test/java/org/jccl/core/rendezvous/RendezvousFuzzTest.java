package org.jccl.core.rendezvous;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile and broken peers: each bad connection is closed alone, after an ERROR naming the fault where the server
 * read all it was sent (a reset may swallow it otherwise); no key changes; the witness stays connected and served,
 * and a newcomer is still admitted.
 */
class RendezvousFuzzTest {
    private static final int MAX_FRAME = 64 * 1024;
    private static final byte[] VALUE = "kept".getBytes(StandardCharsets.UTF_8);

    private RendezvousServer server;
    private RendezvousClient witness;

    @BeforeEach
    void start() {
        server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(4)
                .handshakeTimeout(Duration.ofMillis(500)).build());
        witness = TestServers.connect(server, 0, 4);
        witness.setNow("stable", VALUE);
    }

    @AfterEach
    void stop() {
        witness.close();
        server.close();
    }

    /**
     * The store holds exactly what the witness put there, the witness is still connected and served, the server
     * still admits and serves a newcomer, and no rank but the witness's is left holding a connection.
     */
    private void assertStoreUnchangedAndServing() {
        assertEquals(Set.of("stable"), server.keys());
        assertArrayEquals(VALUE, witness.getNow("stable", Duration.ofSeconds(2)));
        assertTrue(witness.isConnected());
        try (RendezvousClient newcomer = TestServers.connect(server, 2, 4)) {
            assertArrayEquals(VALUE, newcomer.getNow("stable", Duration.ofSeconds(2)));
            newcomer.setNow("newcomer", VALUE);
            assertArrayEquals(VALUE, witness.getNow("newcomer", Duration.ofSeconds(2)));
            assertTrue(newcomer.deleteNow("newcomer"));
        }
        assertEquals(Set.of("stable"), server.keys());
        await().atMost(Duration.ofSeconds(5)).until(() -> server.liveRanks().equals(Set.of(0)));
    }

    /** A joined peer that was thrown out for a fault counts as dead (it left without LEAVE) and may join again. */
    private void assertThrownOutRankIsDeadAndFree(int rank) {
        await().atMost(Duration.ofSeconds(5)).until(() -> server.deadRanks().equals(Set.of(rank)));
        try (RendezvousClient again = TestServers.connect(server, rank, 4)) {
            assertEquals(Set.of(), again.deadRanksNow());
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void randomBytesBeforeJoiningCloseTheConnection(long seed) throws IOException {
        byte[] junk = new byte[64 + new Random(seed).nextInt(4096)];
        new Random(seed).nextBytes(junk);
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.writeRaw(junk);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void randomBytesAfterJoiningCloseOnlyThatConnection() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            byte[] junk = new byte[2048];
            new Random(42).nextBytes(junk);
            // A plausible length, so the junk is read as a frame of random type and contents, not waited for.
            junk[0] = 0;
            junk[1] = 0;
            junk[2] = 0;
            junk[3] = 100;
            peer.writeRaw(junk);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
        assertThrownOutRankIsDeadAndFree(1);
    }

    @Test
    void oversizedFrameIsRefusedBeforeItIsRead() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            byte[] key = "big".getBytes(StandardCharsets.UTF_8);
            byte[] payload = new PayloadWriter().string("big").bytes(new byte[MAX_FRAME]).toByteArray();
            assertTrue(payload.length > key.length);
            // Only the header: the declared length alone exceeds the limit (fail-fast).
            peer.writeRaw(ByteBuffer.allocate(4).putInt(Frame.HEADER_BYTES + payload.length).array());
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("exceeds " + MAX_FRAME), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
        assertThrownOutRankIsDeadAndFree(1);
    }

    @Test
    void beforeJoiningEvenAModerateFrameIsTooLarge() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.expect(MessageType.CHALLENGE);
            // Far below the 64 KiB limit of admitted peers, above the handshake's 1 KiB: refused on its header alone.
            peer.writeRaw(ByteBuffer.allocate(4).putInt(2000).array());
            // The reason tells this apart from the handshake timeout, which also closes a peer that never joins.
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("before the handshake"), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @ParameterizedTest
    @CsvSource({"-1, exceeds", "-2147483648, exceeds", "2147483647, exceeds", "0, shorter than its header",
            "3, shorter than its header"})
    void impossibleLengthsCloseTheConnection(int length, String reason) throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            peer.writeRaw(ByteBuffer.allocate(12).putInt(length).putInt(0).putInt(0).array());
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains(reason), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void truncatedPayloadChangesNothing() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            byte[] whole = new PayloadWriter().string("stable").bytes("overwritten".getBytes(StandardCharsets.UTF_8))
                    .toByteArray();
            byte[] cut = new byte[whole.length - 3]; // the value's length field now points past the end
            System.arraycopy(whole, 0, cut, 0, cut.length);
            peer.writeFrame(MessageType.SET, 7, cut);
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("payload ends early"), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void framesBehindABadOneInTheSameWriteAreNotApplied() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            // Well framed but with a malformed payload (a DELETE without its key), so only the handler sees the fault.
            byte[] bad = RawPeer.frameBytes(MessageType.DELETE.code, 1, new byte[] {0});
            byte[] good = RawPeer.frameBytes(MessageType.SET.code, 2,
                    new PayloadWriter().string("after-bad").bytes(new byte[] {1}).toByteArray());
            byte[] both = new byte[bad.length + good.length];
            System.arraycopy(bad, 0, both, 0, bad.length);
            System.arraycopy(good, 0, both, bad.length, good.length);
            peer.writeRaw(both);
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("payload ends early"), why);
            assertTrue(peer.closedByServer(), "no RESULT for the SET behind the bad frame");
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void trailingBytesChangeNothing() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            byte[] payload = new PayloadWriter().string("new-key").bytes(new byte[] {1}).u8(9).toByteArray();
            peer.writeFrame(MessageType.SET, 7, payload);
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("trailing bytes"), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void unknownTypesAndServerTypesAreRefused() throws IOException {
        for (int type : new int[] {0x00, 0x7F, 0xFF, MessageType.RESULT.code}) {
            try (RawPeer peer = new RawPeer(server.address())) {
                assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
                peer.writeRaw(RawPeer.frameBytes(type, 1, new byte[0]));
                String why = peer.refusal(ErrorCode.BAD_REQUEST);
                String expected = type == MessageType.RESULT.code ? "is not a request" : "unknown message type";
                assertTrue(why.contains(expected), "type 0x" + Integer.toHexString(type) + ": " + why);
                assertTrue(peer.closedByServer(), "type 0x" + Integer.toHexString(type));
            }
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void requestsBeforeJoiningAreRefused() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.expect(MessageType.CHALLENGE);
            peer.writeFrame(MessageType.SET, 1, new PayloadWriter().string("sneaky").bytes(new byte[] {1}).toByteArray());
            String why = peer.refusal(ErrorCode.BAD_REQUEST);
            assertTrue(why.contains("SET before JOIN"), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void aReplayedProofIsUseless() throws IOException {
        // A proof is bound to the server's nonce of that connection: sending one made for a made-up nonce fails.
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.expect(MessageType.CHALLENGE);
            byte[] clientNonce = Handshake.nonce();
            byte[] proof = Handshake.clientProof(TestServers.SECRET_BYTES, Handshake.nonce(), clientNonce, 1, 4);
            peer.writeFrame(MessageType.JOIN, 0, new PayloadWriter().i32(1).i32(4).raw(clientNonce).raw(proof).toByteArray());
            Frame answer = peer.readFrame();
            assertEquals(MessageType.ERROR, answer.type());
            assertEquals(ErrorCode.AUTHENTICATION_FAILED.code, new PayloadReader(answer.payload()).u16());
            assertTrue(peer.closedByServer());
        }
        assertEquals(Set.of(0), server.liveRanks());
        assertStoreUnchangedAndServing();
    }

    @Test
    void aSilentConnectionIsClosedAfterTheHandshakeTimeout() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.expect(MessageType.CHALLENGE);
            // Say nothing: the server must close within the 500 ms handshake timeout (the read timeout is 10 s).
            String why = peer.refusal(ErrorCode.TIMEOUT);
            assertTrue(why.contains("did not authenticate within 500 ms"), why);
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }
}
