package org.jccl.core.rendezvous;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import org.jspecify.annotations.Nullable;

/**
 * Splits the byte stream into {@link Frame}s: a 4-byte big-endian length (of type, request id and payload), then
 * those bytes. A length above the maximum fails at once, before any of the frame is buffered (fail-fast), and an
 * unknown type or a frame shorter than its header is malformed; the handler behind closes the connection on either.
 */
final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    FrameDecoder(int maxFrameBytes) {
        // maxFrameLength counts the whole frame including its length field; strip the field from the output.
        super(maxFrameBytes, 0, Frame.LENGTH_FIELD_BYTES, 0, Frame.LENGTH_FIELD_BYTES, true);
    }

    @Override
    protected @Nullable Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
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
