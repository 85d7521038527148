package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** How bytes become frames, however the network cuts or joins them, and the limits before and after the handshake. */
class FrameDecoderTest {
    private static final int MAX_FRAME = 64 * 1024;

    private static EmbeddedChannel decoder(boolean admitted) {
        FrameDecoder d = new FrameDecoder(MAX_FRAME);
        if (admitted) d.admit();
        return new EmbeddedChannel(d);
    }

    private static byte[] frame(MessageType type, int requestId, byte[] payload) {
        return RawPeer.frameBytes(type.code, requestId, payload);
    }

    private static byte[] payload(int n, int seed) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) p[i] = (byte) (seed + 7 * i);
        return p;
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum());
        for (byte[] p : parts) b.put(p);
        return b.array();
    }

    private static void assertFrame(Object decoded, MessageType type, int requestId, byte[] payload) {
        Frame f = assertInstanceOf(Frame.class, decoded);
        assertEquals(type, f.type());
        assertEquals(requestId, f.requestId());
        assertArrayEquals(payload, f.payload());
    }

    @Test
    void aFrameSplitAcrossTwoReadsIsDecodedOnceWhole() {
        byte[] p = payload(40, 3);
        byte[] bytes = frame(MessageType.SET, 17, p);
        // Every cut: inside the length field, inside the header, inside the payload.
        for (int cut = 1; cut < bytes.length; cut++) {
            EmbeddedChannel ch = decoder(false);
            ch.writeInbound(Unpooled.wrappedBuffer(bytes, 0, cut));
            assertNull(ch.readInbound(), "nothing before the frame is complete (cut at " + cut + ")");
            ch.writeInbound(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            assertFrame(ch.readInbound(), MessageType.SET, 17, p);
            assertNull(ch.readInbound());
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void framesCoalescedInOneReadAreDecodedInOrder() {
        byte[] a = frame(MessageType.SET, 1, payload(10, 1));
        byte[] b = frame(MessageType.HEARTBEAT, 0, new byte[0]);
        byte[] c = frame(MessageType.GET, 3, payload(300, 5));
        byte[] d = frame(MessageType.DELETE, 4, payload(6, 9));
        EmbeddedChannel ch = decoder(true);
        // Three whole frames and the first half of a fourth in one read, the rest of the fourth in the next.
        byte[] first = concat(a, b, c, Arrays.copyOf(d, 5));
        ch.writeInbound(Unpooled.wrappedBuffer(first));
        assertFrame(ch.readInbound(), MessageType.SET, 1, payload(10, 1));
        assertFrame(ch.readInbound(), MessageType.HEARTBEAT, 0, new byte[0]);
        assertFrame(ch.readInbound(), MessageType.GET, 3, payload(300, 5));
        assertNull(ch.readInbound());
        ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(d, 5, d.length)));
        assertFrame(ch.readInbound(), MessageType.DELETE, 4, payload(6, 9));
        assertNull(ch.readInbound());
        ch.finishAndReleaseAll();
    }

    @Test
    void beforeTheHandshakeFramesAreLimitedTo1KiBOnTheirLengthAlone() {
        int largest = FrameDecoder.HANDSHAKE_MAX_FRAME_BYTES - Frame.LENGTH_FIELD_BYTES - Frame.HEADER_BYTES;
        EmbeddedChannel fits = decoder(false);
        fits.writeInbound(Unpooled.wrappedBuffer(frame(MessageType.JOIN, 0, payload(largest, 2))));
        assertFrame(fits.readInbound(), MessageType.JOIN, 0, payload(largest, 2));
        fits.finishAndReleaseAll();

        EmbeddedChannel tooLarge = decoder(false);
        // One byte over, and only the length field sent: refused before any of the body is buffered.
        byte[] header = ByteBuffer.allocate(4).putInt(Frame.HEADER_BYTES + largest + 1).array();
        TooLongFrameException e = assertThrows(TooLongFrameException.class,
                () -> tooLarge.writeInbound(Unpooled.wrappedBuffer(header)));
        assertTrue(e.getMessage().contains("before the handshake"), e.getMessage());
        tooLarge.finishAndReleaseAll();
    }

    @Test
    void afterTheHandshakeTheConfiguredLimitApplies() {
        byte[] p = payload(2000, 4);
        EmbeddedChannel ch = decoder(true);
        ch.writeInbound(Unpooled.wrappedBuffer(frame(MessageType.SET, 5, p)));
        assertFrame(ch.readInbound(), MessageType.SET, 5, p);
        byte[] header = ByteBuffer.allocate(4).putInt(MAX_FRAME).array(); // with its length field: 4 bytes over
        TooLongFrameException e = assertThrows(TooLongFrameException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
        assertTrue(e.getMessage().contains("exceeds " + MAX_FRAME), e.getMessage());
        ch.finishAndReleaseAll();
    }

    @Test
    void nothingIsDecodedBehindABadFrame() {
        EmbeddedChannel ch = decoder(true);
        byte[] unknownType = RawPeer.frameBytes(0x7F, 1, new byte[0]);
        byte[] good = frame(MessageType.SET, 2, payload(4, 0));
        DecoderException e = assertThrows(DecoderException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(concat(unknownType, good))));
        MalformedFrameException cause = assertInstanceOf(MalformedFrameException.class, e.getCause());
        assertTrue(cause.getMessage().contains("unknown message type 0x7f"), cause.getMessage());
        ch.writeInbound(Unpooled.wrappedBuffer(good));
        assertNull(ch.readInbound(), "the connection is closing: neither the frame behind it nor later ones count");
        ch.finishAndReleaseAll();
    }

    @Test
    void aFrameShorterThanItsHeaderIsMalformed() {
        EmbeddedChannel ch = decoder(true);
        byte[] bytes = ByteBuffer.allocate(8).putInt(4).putInt(0).array();
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bytes)));
        assertTrue(e.getCause().getMessage().contains("shorter than its header"), e.getCause().getMessage());
        ch.finishAndReleaseAll();
    }
}
