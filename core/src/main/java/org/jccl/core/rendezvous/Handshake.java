package org.jccl.core.rendezvous;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The challenge–response that admits a client. The server sends a random nonce; the client answers with its rank,
 * world size, a nonce of its own and HMAC-SHA256(secret, "jccl-client" || serverNonce || clientNonce || rank ||
 * worldSize). The server answers with HMAC-SHA256(secret, "jccl-server" || serverNonce || clientNonce || rank), so
 * the client knows the server holds the secret too. The secret never crosses the wire; a recorded exchange cannot
 * be replayed (fresh nonces); MACs are compared in constant time.
 */
final class Handshake {
    /** Protocol version in the challenge; a client refuses a server that speaks another. */
    static final int VERSION = 1;
    static final int NONCE_BYTES = 32;
    static final int MAC_BYTES = 32;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] CLIENT_LABEL = "jccl-client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_LABEL = "jccl-server".getBytes(StandardCharsets.US_ASCII);

    private Handshake() {
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    static byte[] clientProof(byte[] secret, byte[] serverNonce, byte[] clientNonce, int rank, int worldSize) {
        ByteBuffer msg = ByteBuffer.allocate(CLIENT_LABEL.length + 2 * NONCE_BYTES + 8);
        msg.put(CLIENT_LABEL).put(serverNonce).put(clientNonce).putInt(rank).putInt(worldSize);
        return hmac(secret, msg.array());
    }

    static byte[] serverProof(byte[] secret, byte[] serverNonce, byte[] clientNonce, int rank) {
        ByteBuffer msg = ByteBuffer.allocate(SERVER_LABEL.length + 2 * NONCE_BYTES + 4);
        msg.put(SERVER_LABEL).put(serverNonce).put(clientNonce).putInt(rank);
        return hmac(secret, msg.array());
    }

    /** Constant-time comparison, so timing does not reveal how many leading bytes of a guess were right. */
    static boolean matches(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    private static byte[] hmac(byte[] secret, byte[] message) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(message);
        } catch (GeneralSecurityException e) {
            // Every Java 17 runtime must provide HmacSHA256.
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
