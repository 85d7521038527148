package org.jccl.core.rendezvous;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Builds a frame payload: big-endian integers, strings as u16 length + UTF-8, byte arrays as u32 length + bytes. */
final class PayloadWriter {
    /** Longest key or name in UTF-8 bytes (the u16 length field). */
    static final int MAX_STRING_BYTES = 0xFFFF;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

    PayloadWriter u8(int v) {
        out.write(v);
        return this;
    }

    PayloadWriter u16(int v) {
        out.write(v >>> 8);
        out.write(v);
        return this;
    }

    PayloadWriter i32(int v) {
        u16(v >>> 16);
        return u16(v);
    }

    PayloadWriter i64(long v) {
        i32((int) (v >>> 32));
        return i32((int) v);
    }

    PayloadWriter string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_STRING_BYTES) throw new IllegalArgumentException("string longer than " + MAX_STRING_BYTES + " bytes");
        u16(b.length);
        out.writeBytes(b);
        return this;
    }

    PayloadWriter bytes(byte[] b) {
        i32(b.length);
        out.writeBytes(b);
        return this;
    }

    /** Fixed-length bytes with no length prefix (nonces and MACs, whose length the protocol fixes). */
    PayloadWriter raw(byte[] b) {
        out.writeBytes(b);
        return this;
    }

    byte[] toByteArray() {
        return out.toByteArray();
    }
}
