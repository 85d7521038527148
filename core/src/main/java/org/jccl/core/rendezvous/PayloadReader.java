package org.jccl.core.rendezvous;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads a payload written by {@link PayloadWriter}. Every read is bounds-checked: a short payload, a length that
 * points past the end, invalid UTF-8 or bytes left over raise {@link MalformedFrameException}, never an index error.
 */
final class PayloadReader {
    private final ByteBuffer in;

    PayloadReader(byte[] payload) {
        this.in = ByteBuffer.wrap(payload);
    }

    int u8() {
        need(1);
        return in.get() & 0xFF;
    }

    int u16() {
        need(2);
        return in.getShort() & 0xFFFF;
    }

    int i32() {
        need(4);
        return in.getInt();
    }

    long i64() {
        need(8);
        return in.getLong();
    }

    String string() {
        int n = u16();
        need(n);
        ByteBuffer slice = in.slice();
        slice.limit(n);
        in.position(in.position() + n);
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice).toString();
        } catch (CharacterCodingException e) {
            throw new MalformedFrameException("string is not valid UTF-8");
        }
    }

    byte[] bytes() {
        int n = i32();
        if (n < 0) throw new MalformedFrameException("negative length " + n);
        return raw(n);
    }

    byte[] raw(int n) {
        need(n);
        byte[] b = new byte[n];
        in.get(b);
        return b;
    }

    /** Called after the last field: trailing bytes mean the sender and reader disagree on the layout. */
    void end() {
        if (in.hasRemaining()) throw new MalformedFrameException(in.remaining() + " unexpected trailing bytes");
    }

    private void need(int n) {
        if (n < 0 || in.remaining() < n) {
            throw new MalformedFrameException("payload ends early: needs " + n + " more bytes, has " + in.remaining());
        }
    }
}
