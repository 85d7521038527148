package org.jccl.core.rendezvous;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import org.jspecify.annotations.Nullable;

/**
 * Splits the byte stream into {@link Frame}s: a 4-byte big-endian length (of type, request id and payload), then
 * those bytes. A length above the maximum fails at once, before any of the frame is buffered (fail-fast), and an
 * unknown type or a frame shorter than its header is malformed; the handler behind closes the connection on either.
 * Until {@link #admit()}, frames are limited to {@link #HANDSHAKE_MAX_FRAME_BYTES}.
 */
final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    /**
     * The largest frame accepted before the handshake is done. Handshake frames are under 100 bytes; this keeps an
     * unauthenticated peer from making the other side buffer up to the full limit.
     */
    static final int HANDSHAKE_MAX_FRAME_BYTES = 1024;

    private boolean admitted;
    /** Set at the first bad frame: the connection is closing, and what follows it is not read. */
    private boolean failed;

    FrameDecoder(int maxFrameBytes) {
        // maxFrameLength counts the whole frame including its length field; strip the field from the output.
        super(maxFrameBytes, 0, Frame.LENGTH_FIELD_BYTES, 0, Frame.LENGTH_FIELD_BYTES, true);
    }

    /** Lifts the handshake limit: the peer has authenticated. Called on the channel's event loop. */
    void admit() {
        admitted = true;
    }

    @Override
    protected @Nullable Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        try {
            return decodeFrame(ctx, in);
        } catch (Exception e) {
            failed = true;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }

    private @Nullable Frame decodeFrame(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (!admitted && in.readableBytes() >= Frame.LENGTH_FIELD_BYTES) {
            long length = in.getUnsignedInt(in.readerIndex());
            if (length > HANDSHAKE_MAX_FRAME_BYTES - Frame.LENGTH_FIELD_BYTES) {
                throw new TooLongFrameException("a frame of " + length + " bytes before the handshake is done");
            }
        }
        ByteBuf body = (ByteBuf) super.decode(ctx, in);
        if (body == null) return null;
        try {
            if (body.readableBytes() < Frame.HEADER_BYTES) {
                throw new MalformedFrameException("frame of " + body.readableBytes() + " bytes is shorter than its header");
            }
            int code = body.readUnsignedByte();
            MessageType type = MessageType.of(code);
            if (type == null) throw new MalformedFrameException("unknown message type 0x" + Integer.toHexString(code));
            int requestId = body.readInt();
            byte[] payload = new byte[body.readableBytes()];
            body.readBytes(payload);
            return new Frame(type, requestId, payload);
        } finally {
            body.release();
        }
    }
}
