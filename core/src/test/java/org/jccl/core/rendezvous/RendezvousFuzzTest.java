package org.jccl.core.rendezvous;

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
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile and broken peers: each bad connection is closed alone, no key changes, and a well-behaved client keeps
 * being served throughout.
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

    /** The store holds exactly what the witness put there, and the witness is still served. */
    private void assertStoreUnchangedAndServing() {
        assertEquals(Set.of("stable"), server.keys());
        assertArrayEquals(VALUE, witness.getNow("stable", Duration.ofSeconds(2)));
        assertTrue(witness.isConnected());
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
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void beforeJoiningEvenAModerateFrameIsTooLarge() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.expect(MessageType.CHALLENGE);
            // Far below the 64 KiB limit of admitted peers, above the handshake's 1 KiB: refused on its header alone.
            peer.writeRaw(ByteBuffer.allocate(4).putInt(2000).array());
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0, 3})
    void impossibleLengthsCloseTheConnection(int length) throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            peer.writeRaw(ByteBuffer.allocate(12).putInt(length).putInt(0).putInt(0).array());
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
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }

    @Test
    void trailingBytesChangeNothing() throws IOException {
        try (RawPeer peer = new RawPeer(server.address())) {
            assertEquals(MessageType.JOINED, peer.join(TestServers.SECRET_BYTES, 1, 4).type());
            byte[] payload = new PayloadWriter().string("new-key").bytes(new byte[] {1}).u8(9).toByteArray();
            peer.writeFrame(MessageType.SET, 7, payload);
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
            assertTrue(peer.closedByServer());
        }
        assertStoreUnchangedAndServing();
    }
}
