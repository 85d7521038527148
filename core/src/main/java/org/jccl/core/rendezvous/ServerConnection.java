package org.jccl.core.rendezvous;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of one connection. It challenges the peer at once and accepts nothing but a JOIN until the peer
 * has proved the secret; any protocol violation (malformed or oversized frame, unexpected type, bad proof, a rank
 * already held) or a handshake that takes too long closes this connection only, after an ERROR that says why (so a
 * client, or a test, can tell one reason from another). Every request is parsed completely before it changes
 * anything, so a malformed one changes no key. Runs on the server's event-loop thread.
 */
final class ServerConnection extends SimpleChannelInboundHandler<Frame> {
    private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);
    /** The most keys one WAIT may name (a few per rank of a large job). */
    static final int MAX_WAIT_KEYS = 65_536;

    private final ServerState state;
    private final byte[] secret;
    private final Duration handshakeTimeout;
    private final byte[] serverNonce = Handshake.nonce();
    /** Whom the store counts the keys this connection creates against. */
    private final long connectionId;
    private @Nullable ScheduledFuture<?> handshakeTimer;
    private boolean joined;
    private int rank = RendezvousOptions.NO_RANK;
    private boolean leftCleanly;
    /** Set when this connection is being closed for a fault: frames already decoded behind the bad one are dropped. */
    private boolean closing;

    ServerConnection(ServerState state, byte[] secret, Duration handshakeTimeout) {
        this.state = state;
        this.secret = secret;
        this.handshakeTimeout = handshakeTimeout;
        this.connectionId = state.newConnectionId();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Frame.of(MessageType.CHALLENGE, 0, new PayloadWriter().u8(Handshake.VERSION).raw(serverNonce)));
        handshakeTimer = ctx.executor().schedule(() -> {
            LOG.warn("rendezvous: {} did not authenticate within {} ms; closing it", ctx.channel().remoteAddress(),
                    handshakeTimeout.toMillis());
            refuse(ctx.channel(), ErrorCode.TIMEOUT, "did not authenticate within " + handshakeTimeout.toMillis() + " ms");
        }, handshakeTimeout.toNanos(), TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (closing || !ctx.channel().isActive()) return;
        if (!joined) {
            if (frame.type() != MessageType.JOIN) throw new MalformedFrameException(frame.type() + " before JOIN");
            join(ctx, frame);
            return;
        }
        Channel ch = ctx.channel();
        int id = frame.requestId();
        PayloadReader in = new PayloadReader(frame.payload());
        switch (frame.type()) {
            case SET -> {
                String key = in.string();
                byte[] value = in.bytes();
                in.end();
                try {
                    state.store.set(key, value, connectionId);
                } catch (StoreLimitException e) {
                    sendError(ch, id, ErrorCode.LIMIT_EXCEEDED, e.getMessage());
                    return;
                }
                ch.writeAndFlush(Frame.empty(MessageType.RESULT, id));
                state.keysChanged();
            }
            case GET -> {
                String key = in.string();
                long timeoutMillis = in.i64();
                in.end();
                if (timeoutMillis > 0) timeoutMillis = Math.min(timeoutMillis, BoundedWait.LONGEST.toMillis());
                if (timeoutMillis <= 0) {
                    byte[] v = state.store.get(key);
                    PayloadWriter out = new PayloadWriter().u8(v == null ? 0 : 1).bytes(v == null ? new byte[0] : v);
                    ch.writeAndFlush(Frame.of(MessageType.RESULT, id, out));
                } else {
                    state.awaitKeys(ch, id, List.of(key), true, Duration.ofMillis(timeoutMillis));
                }
            }
            case WAIT -> {
                long timeoutMillis = positiveTimeout(in.i64());
                int n = in.i32();
                if (n < 0 || n > MAX_WAIT_KEYS) throw new MalformedFrameException("WAIT names " + n + " keys");
                List<String> keys = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) keys.add(in.string());
                in.end();
                state.awaitKeys(ch, id, List.copyOf(keys), false, Duration.ofMillis(timeoutMillis));
            }
            case ADD -> {
                String key = in.string();
                long delta = in.i64();
                in.end();
                long value;
                try {
                    value = state.store.add(key, delta, connectionId);
                } catch (NumberFormatException | ArithmeticException e) {
                    sendError(ch, id, ErrorCode.BAD_REQUEST, "key '" + key + "' does not hold a counter in range");
                    return;
                } catch (StoreLimitException e) {
                    sendError(ch, id, ErrorCode.LIMIT_EXCEEDED, e.getMessage());
                    return;
                }
                ch.writeAndFlush(Frame.of(MessageType.RESULT, id, new PayloadWriter().i64(value)));
                state.keysChanged();
            }
            case COMPARE_AND_SET -> {
                String key = in.string();
                boolean hasExpected = in.u8() != 0;
                byte[] expected = in.bytes();
                byte[] desired = in.bytes();
                in.end();
                boolean swapped;
                try {
                    swapped = state.store.compareAndSet(key, hasExpected ? expected : null, desired, connectionId);
                } catch (StoreLimitException e) {
                    sendError(ch, id, ErrorCode.LIMIT_EXCEEDED, e.getMessage());
                    return;
                }
                ch.writeAndFlush(Frame.of(MessageType.RESULT, id, new PayloadWriter().u8(swapped ? 1 : 0)));
                if (swapped) state.keysChanged();
            }
            case DELETE -> {
                String key = in.string();
                in.end();
                boolean existed = state.store.delete(key);
                ch.writeAndFlush(Frame.of(MessageType.RESULT, id, new PayloadWriter().u8(existed ? 1 : 0)));
            }
            case BARRIER -> {
                String name = in.string();
                int size = in.i32();
                long timeoutMillis = positiveTimeout(in.i64());
                in.end();
                if (size < 1) {
                    sendError(ch, id, ErrorCode.BAD_REQUEST, "barrier size must be >= 1, not " + size);
                    return;
                }
                state.arrive(ch, id, name, size, Duration.ofMillis(timeoutMillis));
            }
            case DEAD_RANKS -> {
                in.end();
                PayloadWriter out = new PayloadWriter();
                out.i32(state.ranks.dead().size());
                for (int r : state.ranks.dead()) out.i32(r);
                out.i32(state.ranks.live().size());
                for (int r : state.ranks.live()) out.i32(r);
                ch.writeAndFlush(Frame.of(MessageType.RESULT, id, out));
            }
            case HEARTBEAT -> {
                in.end();
                ch.writeAndFlush(Frame.empty(MessageType.HEARTBEAT_ACK, id));
            }
            case LEAVE -> {
                in.end();
                leftCleanly = true;
                if (rank >= 0) state.ranks.release(rank, ch, true);
                ch.writeAndFlush(Frame.empty(MessageType.RESULT, id));
            }
            default -> throw new MalformedFrameException(frame.type() + " is not a request");
        }
    }

    private void join(ChannelHandlerContext ctx, Frame frame) {
        PayloadReader in = new PayloadReader(frame.payload());
        int claimedRank = in.i32();
        int clientWorldSize = in.i32();
        byte[] clientNonce = in.raw(Handshake.NONCE_BYTES);
        byte[] proof = in.raw(Handshake.MAC_BYTES);
        in.end();
        Channel ch = ctx.channel();
        byte[] expected = Handshake.clientProof(secret, serverNonce, clientNonce, claimedRank, clientWorldSize);
        if (!Handshake.matches(expected, proof)) {
            LOG.warn("rendezvous: {} failed authentication (claimed rank {}); closing it", ch.remoteAddress(), claimedRank);
            refuse(ch, ErrorCode.AUTHENTICATION_FAILED, "authentication failed");
            return;
        }
        int worldSize = state.worldSize();
        if (claimedRank < RendezvousOptions.NO_RANK || (worldSize > 0 && claimedRank >= worldSize)) {
            refuse(ch, ErrorCode.BAD_REQUEST, "rank " + claimedRank + " is outside the job's " + worldSize + " ranks");
            return;
        }
        if (worldSize > 0 && clientWorldSize > 0 && clientWorldSize != worldSize) {
            refuse(ch, ErrorCode.BAD_REQUEST, "world size " + clientWorldSize + " differs from the job's " + worldSize);
            return;
        }
        if (claimedRank >= 0 && !state.ranks.claim(claimedRank, ch)) {
            LOG.warn("rendezvous: {} claimed rank {}, which a live connection holds; closing it", ch.remoteAddress(),
                    claimedRank);
            refuse(ch, ErrorCode.RANK_TAKEN, "rank " + claimedRank + " is already held by a live connection");
            return;
        }
        if (handshakeTimer != null) handshakeTimer.cancel(false);
        joined = true;
        rank = claimedRank;
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null) decoder.admit();
        state.admit(ch);
        byte[] serverProof = Handshake.serverProof(secret, serverNonce, clientNonce, claimedRank);
        ch.writeAndFlush(Frame.of(MessageType.JOINED, 0, new PayloadWriter().raw(serverProof)));
    }

    private void refuse(Channel ch, ErrorCode code, String message) {
        closing = true;
        ch.writeAndFlush(errorFrame(0, code, message)).addListener(ChannelFutureListener.CLOSE);
    }

    static void sendError(Channel ch, int requestId, ErrorCode code, String message) {
        ch.writeAndFlush(errorFrame(requestId, code, message));
    }

    private static Frame errorFrame(int requestId, ErrorCode code, String message) {
        return Frame.of(MessageType.ERROR, requestId, new PayloadWriter().u16(code.code).string(message));
    }

    private static long positiveTimeout(long millis) {
        if (millis <= 0) throw new MalformedFrameException("timeout must be positive, not " + millis);
        return Math.min(millis, BoundedWait.LONGEST.toMillis());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (handshakeTimer != null) handshakeTimer.cancel(false);
        Channel ch = ctx.channel();
        state.forget(ch);
        state.store.forgetOwner(connectionId);
        if (rank >= 0 && state.ranks.release(rank, ch, leftCleanly)) {
            LOG.warn("rendezvous: rank {} ({}) is dead: its connection ended without LEAVE", rank, ch.remoteAddress());
            state.announceDead(rank);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.warn("rendezvous: {} (rank {}) silent too long; closing it", ctx.channel().remoteAddress(), rank);
            refuse(ctx.channel(), ErrorCode.TIMEOUT, "silent for longer than deadAfter; closing the connection");
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (closing) return;
        LOG.warn("rendezvous: closing {} (rank {}): {}", ctx.channel().remoteAddress(), rank, cause.toString());
        Throwable fault = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (fault instanceof DecoderException || fault instanceof MalformedFrameException) {
            refuse(ctx.channel(), ErrorCode.BAD_REQUEST, "protocol violation, closing the connection: " + fault.getMessage());
        } else {
            // An I/O failure: the connection is broken, nothing can be told.
            closing = true;
            ctx.close();
        }
    }
}
