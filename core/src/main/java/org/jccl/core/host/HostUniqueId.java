package org.jccl.core.host;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import org.jccl.core.error.InvalidArgumentException;

/**
 * The layout of a host-backend unique id (128 bytes, like NCCL's): a magic, the creator's bootstrap address
 * (where ranks of other processes join) and a random token that admits peers. Anything that is not this layout is
 * treated as an opaque in-JVM key, so ids made up by tests and older callers keep working between threads.
 *
 * <pre>
 * 0..3   magic "JHI1"
 * 4      address length (4 or 16)
 * 5..20  address bytes
 * 21..22 port (unsigned)
 * 23..54 token (32 random bytes)
 * rest   random padding
 * </pre>
 *
 * @param address where the id's bootstrap root listens
 * @param token   the secret every joining rank presents
 */
record HostUniqueId(InetSocketAddress address, byte[] token) {
    static final int TOKEN_BYTES = 32;
    private static final byte[] MAGIC = {'J', 'H', 'I', '1'};
    private static final int TOKEN_AT = 23;

    /** Writes an id of {@code size} bytes, the tail filled from {@code padding}. */
    byte[] encode(byte[] padding) {
        byte[] out = padding.clone();
        ByteBuffer b = ByteBuffer.wrap(out);
        b.put(MAGIC);
        byte[] ip = address.getAddress().getAddress();
        b.put((byte) ip.length).put(Arrays.copyOf(ip, 16));
        b.putShort((short) address.getPort());
        b.put(token);
        return out;
    }

    /** The id's key in this JVM's registries: the token, which no two ids share. */
    String key() {
        return HexFormat.of().formatHex(token);
    }

    /** Parses an id, or returns null when it does not carry a bootstrap address (an in-JVM-only id). */
    static @org.jspecify.annotations.Nullable HostUniqueId decode(byte[] id) {
        if (id.length < TOKEN_AT + TOKEN_BYTES || !Arrays.equals(id, 0, 4, MAGIC, 0, 4)) return null;
        int len = id[4];
        if (len != 4 && len != 16) return null;
        try {
            InetAddress ip = InetAddress.getByAddress(Arrays.copyOfRange(id, 5, 5 + len));
            int port = ((id[21] & 0xff) << 8) | (id[22] & 0xff);
            if (port == 0) return null;
            return new HostUniqueId(new InetSocketAddress(ip, port), Arrays.copyOfRange(id, TOKEN_AT, TOKEN_AT + TOKEN_BYTES));
        } catch (UnknownHostException e) {
            throw new InvalidArgumentException("the unique id names an invalid address: " + e.getMessage());
        }
    }
}
