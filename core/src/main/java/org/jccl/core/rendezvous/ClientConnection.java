package org.jccl.core.rendezvous;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's side of its connection: answers the challenge, checks the server's proof, pairs answers with
 * requests by id, sends heartbeats, records ranks the server announces dead, and fails every pending request when
 * the connection ends (or the server falls silent for deadAfter). Runs on the client's event-loop thread; listeners
 * run on the client's callback executor, never here.
 */
final class ClientConnection extends SimpleChannelInboundHandler<Frame> {
    private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);

    private final RendezvousOptions options;
    private final byte[] secret;
    private final Executor callbacks;
    private final byte[] clientNonce = Handshake.nonce();
    private byte @Nullable [] serverNonce;
    private final AtomicInteger nextRequestId = new AtomicInteger(1);
    private final Map<Integer, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
    private final Set<Integer> announcedDead = ConcurrentHashMap.newKeySet();
    private final CopyOnWriteArrayList<IntConsumer> deathListeners = new CopyOnWriteArrayList<>();
    /** Completes when the server accepted us; fails if it refused or the connection ended first. */
    final CompletableFuture<Void> joined = new CompletableFuture<>();
    /** Completes (normally) when the connection has ended, for whatever reason. */
    final CompletableFuture<Void> disconnected = new CompletableFuture<>();
    private volatile @Nullable Channel channel;
    private volatile @Nullable String lostReason;
    private @Nullable ScheduledFuture<?> heartbeats;

    ClientConnection(RendezvousOptions options, Executor callbacks) {
        this.options = options;
        this.secret = options.secret();
        this.callbacks = callbacks;
    }

    /**
     * Sends a request and returns its raw answer, completed on the event loop. Fails if the connection is gone, the
     * server answers ERROR, or no answer comes within guard.
     */
    CompletableFuture<Frame> request(MessageType type, PayloadWriter payload, Duration requestedGuard) {
        Duration guard = BoundedWait.capped(requestedGuard);
        CompletableFuture<Frame> answer = new CompletableFuture<>();
        Channel ch = channel;
        if (ch == null || !ch.isActive()) {
            answer.completeExceptionally(lost());
            return answer;
        }
        int id = nextRequestId.getAndIncrement();
        pending.put(id, answer);
        // Guards against a server that never answers; the server itself answers TIMEOUT for waits at their deadline.
        ScheduledFuture<?> timer = ch.eventLoop().schedule(() -> {
            CompletableFuture<Frame> f = pending.remove(id);
            if (f != null) {
                f.completeExceptionally(new RendezvousTimeoutException(
                        type + ": no answer from the rendezvous server within " + guard.toMillis() + " ms"));
            }
        }, guard.toNanos(), TimeUnit.NANOSECONDS);
        answer.whenComplete((f, t) -> timer.cancel(false));
        ch.writeAndFlush(Frame.of(type, id, payload)).addListener(w -> {
            if (!w.isSuccess()) {
                CompletableFuture<Frame> f = pending.remove(id);
                if (f != null) f.completeExceptionally(new RendezvousException("cannot send " + type, w.cause()));
            }
        });
        // The channel may have closed between the check and the put: channelInactive then missed this request.
        if (!ch.isActive() && pending.remove(id) != null) answer.completeExceptionally(lost());
        return answer;
    }

    Set<Integer> announcedDead() {
        return Set.copyOf(announcedDead);
    }

    void addDeathListener(IntConsumer listener) {
        deathListeners.add(listener);
    }

    boolean isConnected() {
        Channel ch = channel;
        return joined.isDone() && !joined.isCompletedExceptionally() && ch != null && ch.isActive();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        // Frames decoded behind a bad one arrive after close() began: ignore them.
        if (!ctx.channel().isActive()) return;
        PayloadReader in = new PayloadReader(frame.payload());
        switch (frame.type()) {
            case CHALLENGE -> {
                int version = in.u8();
                byte[] nonce = in.raw(Handshake.NONCE_BYTES);
                in.end();
                if (version != Handshake.VERSION || serverNonce != null) {
                    failJoin(ctx, new RendezvousException("the server speaks rendezvous protocol " + version
                            + ", this client " + Handshake.VERSION, ErrorCode.BAD_REQUEST));
                    return;
                }
                serverNonce = nonce;
                byte[] proof = Handshake.clientProof(secret, nonce, clientNonce, options.rank(), options.worldSize());
                ctx.writeAndFlush(Frame.of(MessageType.JOIN, 0, new PayloadWriter()
                        .i32(options.rank()).i32(options.worldSize()).raw(clientNonce).raw(proof)));
            }
            case JOINED -> {
                byte[] proof = in.raw(Handshake.MAC_BYTES);
                in.end();
                byte[] nonce = serverNonce;
                if (nonce == null || !Handshake.matches(Handshake.serverProof(secret, nonce, clientNonce, options.rank()), proof)) {
                    failJoin(ctx, new RendezvousException("the server at " + ctx.channel().remoteAddress()
                            + " could not prove it holds the secret", ErrorCode.AUTHENTICATION_FAILED));
                    return;
                }
                FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
                if (decoder != null) decoder.admit();
                long interval = options.heartbeatInterval().toNanos();
                heartbeats = ctx.executor().scheduleAtFixedRate(
                        () -> ctx.writeAndFlush(Frame.empty(MessageType.HEARTBEAT, 0)), interval, interval,
                        TimeUnit.NANOSECONDS);
                joined.complete(null);
            }
            case RESULT -> {
                CompletableFuture<Frame> f = pending.remove(frame.requestId());
                if (f != null) f.complete(frame);
            }
            case ERROR -> {
                int code = in.u16();
                String message = in.string();
                in.end();
                ErrorCode errorCode = ErrorCode.of(code);
                RendezvousException e = errorCode == ErrorCode.TIMEOUT
                        ? new RendezvousTimeoutException(message) : new RendezvousException(message, errorCode);
                if (frame.requestId() == 0) {
                    if (!joined.isDone()) failJoin(ctx, new RendezvousException("the rendezvous server refused to admit rank "
                            + options.rank() + ": " + message, errorCode));
                    else lostReason = message;
                    return;
                }
                CompletableFuture<Frame> f = pending.remove(frame.requestId());
                if (f != null) f.completeExceptionally(e);
            }
            case RANK_DEAD -> {
                int rank = in.i32();
                in.end();
                if (announcedDead.add(rank)) {
                    for (IntConsumer l : deathListeners) callbacks.execute(() -> l.accept(rank));
                }
            }
            case HEARTBEAT_ACK -> in.end();
            default -> throw new MalformedFrameException("the server sent " + frame.type());
        }
    }

    private void failJoin(ChannelHandlerContext ctx, RendezvousException e) {
        joined.completeExceptionally(e);
        ctx.close();
    }

    private RendezvousException lost() {
        Channel ch = channel;
        String reason = lostReason;
        return new RendezvousException("the connection to the rendezvous server"
                + (ch == null ? "" : " at " + ch.remoteAddress()) + " is lost" + (reason == null ? "" : ": " + reason),
                (Throwable) null);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (heartbeats != null) heartbeats.cancel(false);
        RendezvousException e = lost();
        joined.completeExceptionally(e);
        for (Integer id : pending.keySet()) {
            CompletableFuture<Frame> f = pending.remove(id);
            if (f != null) f.completeExceptionally(e);
        }
        disconnected.complete(null);
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            lostReason = "the server was silent for " + options.deadAfter().toMillis() + " ms";
            LOG.warn("rendezvous: {}; closing the connection", lostReason);
            ctx.close();
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        lostReason = cause.toString();
        LOG.warn("rendezvous: closing the connection to the server: {}", cause.toString());
        ctx.close();
    }
}
