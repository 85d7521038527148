package org.jccl.rma.kv;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.net.ListenAddresses;
import org.jccl.core.net.NetLoops;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jspecify.annotations.Nullable;
import org.jccl.core.net.NettyDefaults;

/**
 * KV links between processes: one TCP connection per sender and receiver, length-prefixed frames of
 * {@link KvMessage}s. The receiver listens where {@link ListenAddresses} says and publishes {@code host:port:token} in
 * the rendezvous store (which authenticates its clients); a sender's first frame is that token, so nothing else can
 * talk to a receiver. Both ends send an empty frame when they have been silent for {@link #HEARTBEAT}, and drop a link
 * silent for {@link #SILENCE}: a peer that died without closing its socket is noticed within that time.
 */
final class TcpKvLinks {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final NetLoops LOOPS = NetLoops.owned("jccl-kv-net", 2);
    private static final int MAX_FRAME = 64 << 20;
    static final Duration HEARTBEAT = Duration.ofSeconds(2);
    static final Duration SILENCE = Duration.ofSeconds(10);
    private static final int TOKEN_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private TcpKvLinks() {
    }

    private static String storeKey(String key) {
        return "jccl/kv/" + key;
    }

    /** A receiver's listening socket, with its lease on the event loops. */
    static final class Server implements AutoCloseable {
        private final Channel listener;
        private final NetLoops.Lease lease;

        private Server(Channel listener, NetLoops.Lease lease) {
            this.listener = listener;
            this.lease = lease;
        }

        @Override
        public void close() {
            listener.close().addListener(f -> lease.release());
        }
    }

    static CompletableFuture<Server> listen(RendezvousClient rendezvous, String key, KvLink.Acceptor acceptor) {
        NetLoops.Lease lease = LOOPS.lease();
        byte[] token = new byte[TOKEN_BYTES];
        RANDOM.nextBytes(token);
        Channel listener;
        try {
            listener = new ServerBootstrap().group(lease.group()).channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            frames(ch);
                            ch.pipeline().addLast(new ReceiverEnd(token, acceptor));
                        }
                    }).bind(ListenAddresses.bindAddress()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            lease.release();
            throw e;
        }
        InetSocketAddress at = ListenAddresses.advertised((InetSocketAddress) listener.localAddress());
        String published = at.getAddress().getHostAddress() + ":" + at.getPort() + ":" + HexFormat.of().formatHex(token);
        Server server = new Server(listener, lease);
        return rendezvous.set(storeKey(key), published.getBytes(StandardCharsets.UTF_8)).handle((v, error) -> {
            if (error != null) {
                server.close();
                throw new java.util.concurrent.CompletionException(error);
            }
            return server;
        });
    }

    static CompletableFuture<KvLink> connect(RendezvousClient rendezvous, String key, Duration timeout, KvLink.Handler handler) {
        return rendezvous.get(storeKey(key), timeout).thenCompose(value -> {
            String[] parts = new String(value, StandardCharsets.UTF_8).split(":");
            InetSocketAddress to = new InetSocketAddress(parts[0], Integer.parseInt(parts[1]));
            byte[] token = HexFormat.of().parseHex(parts[2]);
            NetLoops.Lease lease = LOOPS.lease();
            CompletableFuture<KvLink> connected = new CompletableFuture<>();
            SenderEnd end = new SenderEnd(handler, lease);
            new Bootstrap().group(lease.group()).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            frames(ch);
                            ch.pipeline().addLast(end);
                        }
                    }).connect(to).addListener(f -> {
                        if (!f.isSuccess()) {
                            lease.release();
                            connected.completeExceptionally(new RemoteErrorException("cannot reach the KV receiver " + key
                                    + " at " + to + ": " + f.cause()));
                            return;
                        }
                        Channel ch = ((io.netty.channel.ChannelFuture) f).channel();
                        ch.writeAndFlush(Unpooled.wrappedBuffer(token));
                        connected.complete(new Link(ch, "TCP link to KV receiver " + key + " at " + to));
                    });
            return connected;
        });
    }

    private static void frames(SocketChannel ch) {
        ch.pipeline().addLast(new IdleStateHandler(SILENCE.toMillis(), HEARTBEAT.toMillis(), 0, TimeUnit.MILLISECONDS))
                .addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4))
                .addLast(new LengthFieldPrepender(4));
    }

    /** One end of a connection. */
    private static final class Link implements KvLink {
        private final Channel channel;
        private final String name;

        Link(Channel channel, String name) {
            this.channel = channel;
            this.name = name;
        }

        @Override
        public void send(KvMessage message) {
            if (channel.isActive()) channel.writeAndFlush(Unpooled.wrappedBuffer(KvMessage.encode(message)));
        }

        @Override
        public void close(String reason) {
            channel.close();
        }

        @Override
        public String describe() {
            return name;
        }
    }

    /** What both ends do with frames, silence and the end of the connection. */
    private abstract static class End extends SimpleChannelInboundHandler<ByteBuf> {
        private final AtomicBoolean ended = new AtomicBoolean();

        abstract KvLink.@Nullable Handler handler();

        void end(String why) {
            KvLink.Handler h = handler();
            if (h != null && ended.compareAndSet(false, true)) h.lost(why);
        }

        void deliver(ChannelHandlerContext ctx, ByteBuf frame) {
            if (frame.readableBytes() == 0) return; // a heartbeat
            KvMessage m;
            try {
                m = KvMessage.decode(ByteBufUtil.getBytes(frame));
            } catch (IllegalArgumentException e) {
                end("a malformed KV message: " + e.getMessage());
                ctx.close();
                return;
            }
            KvLink.Handler h = handler();
            if (h != null) h.received(m);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof IdleStateEvent idle) {
                if (idle.state() == IdleState.WRITER_IDLE) {
                    ctx.writeAndFlush(Unpooled.EMPTY_BUFFER);
                } else if (idle.state() == IdleState.READER_IDLE) {
                    end("the peer was silent for " + SILENCE);
                    ctx.close();
                }
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            end("the connection closed");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            end("the connection failed: " + cause);
            ctx.close();
        }
    }

    private static final class SenderEnd extends End {
        private final KvLink.Handler handler;
        private final NetLoops.Lease lease;

        SenderEnd(KvLink.Handler handler, NetLoops.Lease lease) {
            this.handler = handler;
            this.lease = lease;
        }

        @Override
        KvLink.Handler handler() {
            return handler;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            deliver(ctx, frame);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            super.channelInactive(ctx);
            lease.release();
        }
    }

    /** The receiver's end: the first frame must be the published token, then it is a link like any other. */
    private static final class ReceiverEnd extends End {
        private final byte[] token;
        private final KvLink.Acceptor acceptor;
        private volatile KvLink.@Nullable Handler handler;

        ReceiverEnd(byte[] token, KvLink.Acceptor acceptor) {
            this.token = token;
            this.acceptor = acceptor;
        }

        @Override
        KvLink.@Nullable Handler handler() {
            return handler;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (handler == null) {
                if (frame.readableBytes() == 0) return;
                if (!MessageDigest.isEqual(token, ByteBufUtil.getBytes(frame))) {
                    ctx.close(); // not a sender that read the rendezvous store
                    return;
                }
                handler = acceptor.accept(new Link(ctx.channel(), "TCP link to a KV sender at " + ctx.channel().remoteAddress()));
                return;
            }
            deliver(ctx, frame);
        }
    }
}
