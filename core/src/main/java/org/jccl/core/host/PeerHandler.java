package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;

/**
 * The inbound side of an authenticated connection to one peer rank, on a Netty thread: queues data frames for the
 * stream thread and turns every irregularity (malformed frame, lost connection, silence, a peer's failure) into a
 * poisoned clique. It never touches user buffers.
 */
final class PeerHandler extends ChannelInboundHandlerAdapter {
    private final NetworkClique clique;
    private final int peer;
    private volatile boolean leftNormally;

    PeerHandler(NetworkClique clique, int peer) {
        this.clique = clique;
        this.peer = peer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf f = (ByteBuf) msg;
        byte type = f.readableBytes() > 0 ? f.getByte(0) : -1;
        if (type == Wire.DATA && f.readableBytes() >= Wire.DATA_HEADER) {
            int lane = f.getByte(Wire.AT_LANE);
            if (lane >= 0 && lane < Wire.LANES) {
                clique.deliver(peer, lane, f);
                return;
            }
        }
        try {
            switch (type) {
                case Wire.PING -> { }
                case Wire.GOODBYE -> {
                    leftNormally = true;
                    clique.peerLeft(peer);
                }
                case Wire.POISON -> {
                    f.skipBytes(Math.min(f.readableBytes(), 5));
                    clique.poison("rank " + peer + " failed: " + Wire.readText(f), Errors.REMOTE_ERROR, false);
                }
                default -> clique.poison("malformed frame (type " + type + ", " + f.readableBytes() + " bytes) from rank "
                        + peer, Errors.REMOTE_ERROR, true);
            }
        } finally {
            f.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!leftNormally && !clique.isClosed()) {
            clique.poison("lost the connection to rank " + peer + " (its process exited or the network failed)",
                    Errors.REMOTE_ERROR, true);
        }
        clique.wake();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        clique.poison("the connection to rank " + peer + " failed: " + cause, Errors.REMOTE_ERROR, true);
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent idle) {
            if (idle.state() == IdleState.READER_IDLE) {
                clique.poison("no word from rank " + peer + " for " + JcclSettings.HOST_PEER_TIMEOUT.value()
                        + " (" + JcclSettings.HOST_PEER_TIMEOUT.property() + ")", Errors.REMOTE_ERROR, true);
                ctx.close();
            } else if (idle.state() == IdleState.WRITER_IDLE) {
                ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(Wire.PING));
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        clique.wake();
        ctx.fireChannelWritabilityChanged();
    }
}
