package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jccl.core.host.HostNetwork.Refusal;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first handler of a connection a rank's data listener accepts: admits it only with a well-formed HELLO that
 * presents the communicator's token (compared in constant time) and names a rank not yet connected, within the
 * handshake timeout. Until then frames are limited to {@link Wire#HANDSHAKE_MAX_FRAME}. Anything else closes that
 * connection (counted in {@link HostNetwork#refusals}) and leaves the clique alone: a stranger can neither join nor
 * fail a communicator, nor make this process buffer more than a few bytes for long.
 */
final class HelloHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HelloHandler.class);
    /** type, token, rank, number of ranks. */
    static final int HELLO_BYTES = 1 + HostUniqueId.TOKEN_BYTES + 4 + 4;
    private final NetworkClique clique;
    private @Nullable ScheduledFuture<?> handshake;

    HelloHandler(NetworkClique clique) {
        this.clique = clique;
    }

    /** A connection that does not present itself within the handshake timeout is closed. */
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        Duration limit = HostNetwork.handshakeTimeout();
        handshake = ctx.executor().schedule(() -> {
            if (ctx.pipeline().get(HelloHandler.class) == this) {
                refuse(ctx, Refusal.HANDSHAKE_TIMEOUT, "no HELLO within " + limit + " (jccl.host.handshakeTimeout)");
            }
        }, limit.toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf f = (ByteBuf) msg;
        try {
            if (f.readableBytes() != HELLO_BYTES || f.readByte() != Wire.HELLO) {
                refuse(ctx, Refusal.MALFORMED, "a malformed first frame");
                return;
            }
            byte[] token = new byte[HostUniqueId.TOKEN_BYTES];
            f.readBytes(token);
            int from = f.readInt();
            int nranks = f.readInt();
            if (!Wire.sameToken(clique.token(), token)) {
                refuse(ctx, Refusal.WRONG_TOKEN, "a wrong token");
                return;
            }
            if (nranks != clique.size() || !clique.attach(from, ctx.channel())) {
                refuse(ctx, Refusal.UNEXPECTED_RANK, "rank " + from + " of " + nranks + ", which is not expected");
                return;
            }
            cancelHandshakeTimer();
            Wire.admit(ctx.pipeline());
            ctx.pipeline().addLast(NetworkInit.idleHandler()).addLast(new PeerHandler(clique, from));
            ctx.pipeline().remove(this);
        } finally {
            f.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelHandshakeTimer();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        refuse(ctx, cause instanceof TooLongFrameException ? Refusal.OVERSIZED_FRAME : Refusal.MALFORMED, cause.toString());
    }

    private void cancelHandshakeTimer() {
        ScheduledFuture<?> h = handshake;
        if (h != null) h.cancel(false);
    }

    private void refuse(ChannelHandlerContext ctx, Refusal reason, String why) {
        // Count each connection once: a stream may keep failing after the first refusal while it closes.
        if (!ctx.channel().isActive() || ctx.pipeline().get(HelloHandler.class) != this) return;
        cancelHandshakeTimer();
        HostNetwork.refused(reason);
        LOG.warn("jccl host backend: refused a connection from {}: {}", ctx.channel().remoteAddress(), why);
        ctx.close();
    }
}
