package org.jccl.core.rendezvous;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
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
import org.jccl.core.net.NetLoops;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jccl.core.net.NettyDefaults;

/**
 * The rendezvous server: an authenticated in-memory key-value store with waits, counters, compare-and-set and
 * barriers, which also tracks which ranks are alive. The store is bounded ({@link RendezvousOptions#maxStoreBytes()},
 * {@link RendezvousOptions#maxKeysPerClient()}): a write past a limit fails with
 * {@link ErrorCode#LIMIT_EXCEEDED} and stores nothing. It listens on {@link RendezvousOptions#bindAddress()}
 * (loopback by default) and {@link RendezvousOptions#port()} (0: any free port, see {@link #port()}).
 *
 * <p>One Netty event loop of {@link RendezvousOptions#loops()} accepts and serves every connection and owns all
 * state, so the store needs no locks; by default it is the thread {@code jccl-rendezvous-net-*} that the servers
 * and clients of this JVM share. A misbehaving connection is closed alone; others are served on.
 * {@link #close()} is idempotent.
 */
public final class RendezvousServer implements AutoCloseable {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

    private final NetLoops.Lease lease;
    private final EventLoop loop;
    private final Channel listener;
    /** Every accepted connection, authenticated or not: closing the server closes them even on loops it shares. */
    private final ChannelGroup connections;
    private final ServerState state;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RendezvousServer(NetLoops.Lease lease, EventLoop loop, Channel listener, ChannelGroup connections,
                             ServerState state) {
        this.lease = lease;
        this.loop = loop;
        this.listener = listener;
        this.connections = connections;
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
        NetLoops.Lease lease;
        try {
            lease = options.loops().lease();
        } catch (IllegalStateException e) {
            return CompletableFuture.failedFuture(new RendezvousException("cannot start the rendezvous server", e));
        }
        // One loop of the group for the listener and every connection: the state is confined to its thread.
        EventLoop loop = lease.group().next();
        ChannelGroup connections = new DefaultChannelGroup("rendezvous-server", loop);
        ServerState state = new ServerState(options.worldSize(),
                new KeyValueStore(options.maxStoreBytes(), options.maxKeysPerClient()));
        byte[] secret = options.secret();
        long deadAfterNanos = options.deadAfter().toNanos();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
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
                RendezvousServer server = new RendezvousServer(lease, loop, ((io.netty.channel.ChannelFuture) f).channel(),
                        connections, state);
                LOG.info("rendezvous server listening on {} ({})", server.address(), options);
                result.complete(server);
            } else {
                lease.release();
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
        if (loop.inEventLoop()) return state.store.keys();
        CompletableFuture<Set<String>> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(state.store.keys()));
        return BoundedWait.await(f, SHUTDOWN_TIMEOUT, "reading the keys");
    }

    /**
     * Stops listening, tells every authenticated client that the server is closing, closes every connection and
     * gives its event loop back (stopping jccl's threads if nothing else uses them; an application's group is left
     * running). Waits up to a few seconds. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        // A thread of the group must not block on the group (it could be waiting for itself): it only starts things.
        boolean mayWait = !inGroup();
        if (mayWait) listener.close().awaitUninterruptibly(SHUTDOWN_TIMEOUT.toMillis());
        else listener.close();
        CompletableFuture<Void> closing = new CompletableFuture<>();
        if (loop.inEventLoop()) {
            closeConnections().addListener(f -> closing.complete(null));
        } else {
            loop.execute(() -> closeConnections().addListener(f -> closing.complete(null)));
        }
        if (mayWait) {
            try {
                closing.get(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("rendezvous server: closing connections: {}", e.toString());
            }
        }
        Future<?> stopped = lease.release();
        if (mayWait) stopped.awaitUninterruptibly(SHUTDOWN_TIMEOUT.toMillis());
    }

    /** On the server's loop: members hear why, then every connection (members or still authenticating) is closed. */
    private Future<Void> closeConnections() {
        List<Channel> members = new ArrayList<>(state.members());
        for (Channel c : members) {
            ServerConnection.sendError(c, 0, ErrorCode.SHUTTING_DOWN, "the rendezvous server is closing");
        }
        return connections.close();
    }

    /** Whether the calling thread is one of the event loops this server's lease holds. */
    private boolean inGroup() {
        for (EventExecutor e : lease.group()) {
            if (e.inEventLoop()) return true;
        }
        return false;
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + listener.localAddress() + "]";
    }
}
