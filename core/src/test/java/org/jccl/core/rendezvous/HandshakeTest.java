package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The challenge–response's parts: fresh nonces, and proofs that change with every input. */
class HandshakeTest {
    private static final byte[] SECRET = {1, 2, 3, 4, 5, 6, 7, 8};

    @Test
    void everyNonceIsFresh() {
        Set<List<Byte>> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            byte[] n = Handshake.nonce();
            assertEquals(Handshake.NONCE_BYTES, n.length);
            List<Byte> bytes = new java.util.ArrayList<>();
            for (byte b : n) bytes.add(b);
            assertTrue(seen.add(bytes), "a nonce repeated: a recorded exchange could be replayed");
        }
    }

    @Test
    void aProofChangesWithEveryInputAndTheTwoDirectionsDiffer() {
        byte[] s = Handshake.nonce();
        byte[] c = Handshake.nonce();
        byte[] proof = Handshake.clientProof(SECRET, s, c, 2, 4);
        assertEquals(Handshake.MAC_BYTES, proof.length);
        assertTrue(Handshake.matches(proof, Handshake.clientProof(SECRET, s, c, 2, 4)));
        assertFalse(Handshake.matches(proof, Handshake.clientProof(new byte[] {9}, s, c, 2, 4)));
        assertFalse(Handshake.matches(proof, Handshake.clientProof(SECRET, c, s, 2, 4)));
        assertFalse(Handshake.matches(proof, Handshake.clientProof(SECRET, s, c, 3, 4)));
        assertFalse(Handshake.matches(proof, Handshake.clientProof(SECRET, s, c, 2, 5)));
        assertFalse(Handshake.matches(proof, Handshake.serverProof(SECRET, s, c, 2)));
        byte[] server = Handshake.serverProof(SECRET, s, c, 2);
        assertTrue(Handshake.matches(server, Handshake.serverProof(SECRET, s, c, 2)));
        assertFalse(Handshake.matches(server, Handshake.serverProof(SECRET, s, c, 1)));
    }
}
