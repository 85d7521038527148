package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first handler of a connection a rank's data listener accepts: admits it only with a well-formed HELLO that
 * presents the communicator's token (compared in constant time) and names a rank not yet connected. Anything
 * else closes that connection and leaves the clique alone: a stranger can neither join nor fail a communicator.
 */
final class HelloHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HelloHandler.class);
    /** type, token, rank, number of ranks. */
    static final int HELLO_BYTES = 1 + HostUniqueId.TOKEN_BYTES + 4 + 4;
    private final NetworkClique clique;

    HelloHandler(NetworkClique clique) {
        this.clique = clique;
    }

    /** A connection that does not present itself within the init timeout is closed. */
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.executor().schedule(() -> {
            if (ctx.pipeline().get(HelloHandler.class) == this) refuse(ctx, "no HELLO within " + HostComm.initTimeout());
        }, HostComm.initTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf f = (ByteBuf) msg;
        try {
            if (f.readableBytes() != HELLO_BYTES || f.readByte() != Wire.HELLO) {
                refuse(ctx, "a malformed first frame");
                return;
            }
            byte[] token = new byte[HostUniqueId.TOKEN_BYTES];
            f.readBytes(token);
            int from = f.readInt();
            int nranks = f.readInt();
            if (!Wire.sameToken(clique.token(), token)) {
                refuse(ctx, "a wrong token");
                return;
            }
            if (nranks != clique.size() || !clique.attach(from, ctx.channel())) {
                refuse(ctx, "rank " + from + " of " + nranks + ", which is not expected");
                return;
            }
            ctx.pipeline().addLast(NetworkInit.idleHandler()).addLast(new PeerHandler(clique, from));
            ctx.pipeline().remove(this);
        } finally {
            f.release();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        refuse(ctx, cause.toString());
    }

    private static void refuse(ChannelHandlerContext ctx, String why) {
        LOG.warn("jccl host backend: refused a connection from {}: {}", ctx.channel().remoteAddress(), why);
        ctx.close();
    }
}
