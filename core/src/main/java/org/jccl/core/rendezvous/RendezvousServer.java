package org.jccl.core.rendezvous;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rendezvous server: an authenticated in-memory key-value store with waits, counters, compare-and-set and
 * barriers, which also tracks which ranks are alive. It listens on {@link RendezvousOptions#bindAddress()}
 * (loopback by default) and {@link RendezvousOptions#port()} (0: any free port, see {@link #port()}).
 *
 * <p>One Netty event-loop thread ({@code jccl-rendezvous-server}) accepts and serves every connection and owns all
 * state, so the store needs no locks. A misbehaving connection is closed alone; others are served on.
 * {@link #close()} is idempotent.
 */
public final class RendezvousServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

    private final EventLoopGroup loop;
    private final Channel listener;
    private final ServerState state;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RendezvousServer(EventLoopGroup loop, Channel listener, ServerState state) {
        this.loop = loop;
        this.listener = listener;
        this.state = state;
    }

    /**
     * Starts a server and completes when it listens.
     *
     * @param options its address, port, secret, world size (0: ranks not range-checked) and limits
     * @return a future that completes with the listening server, or fails if it cannot bind
     */
    public static CompletableFuture<RendezvousServer> bind(RendezvousOptions options) {
        Objects.requireNonNull(options, "options");
        EventLoopGroup loop = new NioEventLoopGroup(1, new DefaultThreadFactory("jccl-rendezvous-server", true));
        ServerState state = new ServerState(options.worldSize());
        byte[] secret = options.secret();
        long deadAfterNanos = options.deadAfter().toNanos();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                // No frame for deadAfter means a silent peer: heartbeats arrive every interval.
                                .addLast(new IdleStateHandler(deadAfterNanos, 0, 0, TimeUnit.NANOSECONDS))
                                .addLast(new FrameDecoder(options.maxFrameBytes()))
                                .addLast(FrameEncoder.INSTANCE)
                                .addLast(new ServerConnection(state, secret, options.handshakeTimeout()));
                    }
                });
        CompletableFuture<RendezvousServer> result = new CompletableFuture<>();
        InetSocketAddress address = new InetSocketAddress(options.bindAddress(), options.port());
        bootstrap.bind(address).addListener(f -> {
            if (f.isSuccess()) {
                RendezvousServer server = new RendezvousServer(loop, ((io.netty.channel.ChannelFuture) f).channel(), state);
                LOG.info("rendezvous server listening on {} ({})", server.address(), options);
                result.complete(server);
            } else {
                loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
                result.completeExceptionally(new RendezvousException("cannot listen on " + address, f.cause()));
            }
        });
        return result;
    }

    /**
     * Starts a server and waits until it listens (at most the options' timeout).
     *
     * @throws RendezvousException if it cannot bind
     */
    public static RendezvousServer bindNow(RendezvousOptions options) {
        return BoundedWait.await(bind(options), options.timeout(), "binding the rendezvous server");
    }

    /** The address it listens on. */
    public InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** The port it listens on (the chosen one if the options said 0). */
    public int port() {
        return address().getPort();
    }

    /** The ranks that now hold a live, authenticated connection (a sorted, immutable snapshot). */
    public Set<Integer> liveRanks() {
        return state.ranks.live();
    }

    /**
     * The ranks whose connection ended without a clean leave (killed, unreachable, or silent for
     * {@link RendezvousOptions#deadAfter()}) and that have not joined again: a sorted, immutable snapshot.
     */
    public Set<Integer> deadRanks() {
        return state.ranks.dead();
    }

    /** A sorted copy of the stored keys (for diagnostics); waits on the server thread at most a few seconds. */
    public Set<String> keys() {
        if (loop.next().inEventLoop()) return state.store.keys();
        CompletableFuture<Set<String>> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(state.store.keys()));
        return BoundedWait.await(f, SHUTDOWN_TIMEOUT, "reading the keys");
    }

    /** Closes every connection and stops listening; waits up to a few seconds. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        listener.close().awaitUninterruptibly(SHUTDOWN_TIMEOUT.toMillis());
        CompletableFuture<Void> connectionsClosed = new CompletableFuture<>();
        loop.execute(() -> {
            List<Channel> members = new ArrayList<>(state.members());
            for (Channel c : members) {
                ServerConnection.sendError(c, 0, ErrorCode.SHUTTING_DOWN, "the rendezvous server is closing");
                c.close();
            }
            connectionsClosed.complete(null);
        });
        try {
            connectionsClosed.get(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("rendezvous server: closing connections: {}", e.toString());
        }
        loop.shutdownGracefully(0, SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(SHUTDOWN_TIMEOUT.toMillis());
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + listener.localAddress() + "]";
    }
}
