package org.jccl.core.host;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.SystemErrorException;
import org.jccl.core.net.ListenAddresses;
import org.jspecify.annotations.Nullable;

/**
 * How a rank joins a host communicator that spans processes: open a data listener, join the id's root (over TCP,
 * or directly when the root is in this JVM) to learn every rank's data address, dial every lower rank and present
 * the token, wait until a connection to every other rank is up, close the listener.
 */
final class NetworkInit {
    private NetworkInit() {
    }

    /** Silence detection on a data connection: a reader idle for the peer timeout fails it; pings keep it busy. */
    static IdleStateHandler idleHandler() {
        long timeout = JcclSettings.HOST_PEER_TIMEOUT.duration().toMillis();
        return new IdleStateHandler(timeout, Math.max(1, timeout / 3), 0, TimeUnit.MILLISECONDS);
    }

    static HostComm join(HostUniqueId id, int nranks, int rank, @Nullable BootstrapRoot root) {
        Duration timeout = HostComm.initTimeout();
        long deadline = System.nanoTime() + timeout.toNanos();
        EventLoopGroup group = HostNetwork.acquire();
        NetworkClique clique = new NetworkClique(nranks, rank, id.token());
        Channel listener = null;
        try {
            listener = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            Wire.configure(ch);
                            Wire.frameUnauthenticated(ch.pipeline());
                            ch.pipeline().addLast(new HelloHandler(clique));
                        }
                    }).bind(ListenAddresses.bindAddress()).syncUninterruptibly().channel();
            InetSocketAddress mine = ListenAddresses.advertised((InetSocketAddress) listener.localAddress());
            CompletableFuture<InetSocketAddress[]> table = root != null ? root.provideLocal(rank, mine)
                    : askRoot(group, id, nranks, rank, mine, deadline);
            InetSocketAddress[] addresses = await(table, deadline, "the unique id's root at " + id.address());
            for (int j = 0; j < rank; j++) dial(group, clique, addresses[j], j, nranks, deadline);
            await(clique.ready(), deadline, "connections from the other ranks");
            HostComm comm = new HostComm(clique, new Meetings(), rank);
            clique.owner(comm);
            String poison = clique.poisoned();
            if (poison != null) comm.fail(Errors.REMOTE_ERROR, poison);
            return comm;
        } catch (RuntimeException e) {
            clique.poison("rank " + rank + " could not join: " + e.getMessage(), Errors.SYSTEM_ERROR, true);
            throw e;
        } finally {
            if (listener != null) listener.close();
        }
    }

    /** A connection to {@code to}, made before {@code deadline}, whose pipeline {@code pipeline} completes. */
    private static Channel connect(EventLoopGroup group, InetSocketAddress to, long deadline, Consumer<SocketChannel> pipeline) {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000));
        return new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, millis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        pipeline.accept(c);
                    }
                }).connect(to).awaitUninterruptibly().channel();
    }

    private static void dial(EventLoopGroup group, NetworkClique clique, InetSocketAddress to, int peer, int nranks, long deadline) {
        Channel ch = connect(group, to, deadline, c -> {
            Wire.configure(c);
            Wire.frame(c.pipeline());
            c.pipeline().addLast(idleHandler()).addLast(new PeerHandler(clique, peer));
        });
        if (!ch.isActive()) throw new SystemErrorException("cannot connect to rank " + peer + " at " + to);
        ByteBuf hello = ch.alloc().buffer(HelloHandler.HELLO_BYTES).writeByte(Wire.HELLO).writeBytes(clique.token())
                .writeInt(clique.rank()).writeInt(nranks);
        ch.writeAndFlush(hello);
        if (!clique.attach(peer, ch)) {
            ch.close();
            throw new SystemErrorException("rank " + peer + " was connected twice");
        }
    }

    /** Sends a JOIN to a root in another process; completes with the table, or fails with its refusal. */
    private static CompletableFuture<InetSocketAddress[]> askRoot(EventLoopGroup group, HostUniqueId id, int nranks, int rank,
                                                                 InetSocketAddress mine, long deadline) {
        CompletableFuture<InetSocketAddress[]> result = new CompletableFuture<>();
        Channel ch = connect(group, id.address(), deadline, c -> {
            Wire.frame(c.pipeline());
            c.pipeline().addLast(new TableHandler(result, nranks));
        });
        if (!ch.isActive()) {
            throw new SystemErrorException("cannot reach the unique id's root at " + id.address()
                    + " (the process that made the id must be running)");
        }
        ByteBuf join = ch.alloc().buffer(64).writeByte(Wire.JOIN).writeBytes(id.token()).writeInt(nranks).writeInt(rank);
        Wire.writeAddress(join, mine);
        ch.writeAndFlush(join);
        result.whenComplete((t, e) -> ch.close());
        return result;
    }

    private static <T> T await(CompletableFuture<T> f, long deadline, String what) {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new SystemErrorException("timed out waiting for " + what + " (jccl.host.initTimeout)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SystemErrorException("interrupted waiting for " + what);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof JcclException j) throw j;
            if (c instanceof CliqueFailedException cf) throw cf.asJccl();
            throw new SystemErrorException("failed waiting for " + what + ": " + c);
        }
    }

    /** The joining rank's side of the bootstrap: a TABLE, or a REJECT with the root's reason. */
    private static final class TableHandler extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<InetSocketAddress[]> result;
        private final int nranks;

        TableHandler(CompletableFuture<InetSocketAddress[]> result, int nranks) {
            this.result = result;
            this.nranks = nranks;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf f = (ByteBuf) msg;
            try {
                byte type = f.readByte();
                if (type == Wire.REJECT) {
                    result.completeExceptionally(new org.jccl.core.error.InvalidUsageException(
                            "the unique id's root refused this rank: " + Wire.readText(f)));
                } else if (type == Wire.TABLE && f.readInt() == nranks) {
                    InetSocketAddress[] table = new InetSocketAddress[nranks];
                    for (int i = 0; i < nranks; i++) table[i] = Wire.readAddress(f);
                    result.complete(table);
                } else {
                    result.completeExceptionally(new SystemErrorException("malformed answer from the unique id's root"));
                }
            } catch (RuntimeException e) {
                result.completeExceptionally(new SystemErrorException("malformed answer from the unique id's root: " + e));
            } finally {
                f.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            result.completeExceptionally(new SystemErrorException("the unique id's root closed the connection"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            result.completeExceptionally(new SystemErrorException("bootstrap connection failed: " + cause));
            ctx.close();
        }
    }
}
