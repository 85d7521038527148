package org.jccl.core.rendezvous;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/** Writes a {@link Frame} as length, type, request id, payload (the layout {@link FrameDecoder} reads). */
@ChannelHandler.Sharable
final class FrameEncoder extends MessageToByteEncoder<Frame> {
    static final FrameEncoder INSTANCE = new FrameEncoder();

    private FrameEncoder() {
        super(Frame.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, ByteBuf out) {
        out.writeInt(Frame.HEADER_BYTES + frame.payload().length);
        out.writeByte(frame.type().code);
        out.writeInt(frame.requestId());
        out.writeBytes(frame.payload());
    }
}
