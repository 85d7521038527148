package org.jccl.core.host;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.SystemErrorException;
import org.jccl.core.host.HostNetwork.Refusal;
import org.jccl.core.net.ListenAddresses;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jccl.core.net.NettyDefaults;

/**
 * The bootstrap root of one host unique id, in the process that made the id (like NCCL's root thread): it listens
 * at the address the id carries, admits ranks that present the id's token, and once all ranks are there either
 * makes an in-JVM {@link LocalClique} (every rank is a thread of this JVM) or hands every rank the table of data
 * addresses, from which the ranks build their TCP mesh. It closes once it has decided, or after the init timeout.
 */
final class BootstrapRoot {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final Logger LOG = LoggerFactory.getLogger(BootstrapRoot.class);
    /** Roots still open, by id key. */
    private static final Map<String, BootstrapRoot> OPEN = new ConcurrentHashMap<>();
    /** Keys of every id this JVM made, so a reused in-JVM id keeps meeting in this JVM after its root closed. */
    private static final Set<String> MADE_HERE = ConcurrentHashMap.newKeySet();
    /** What a local rank is told when the clique spans processes. */
    static final Object NETWORK = new Object();

    private final HostUniqueId id;
    private final boolean allowLocal;
    private final Channel server;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Fails the ranks still missing at the init timeout; cancelled when the root closes (loops may be shared). */
    private volatile @Nullable ScheduledFuture<?> expiry;
    private int nranks = -1;
    private final Map<Integer, Member> members = new HashMap<>();

    /** A rank that joined: a thread of this JVM (no channel) or a remote process (its bootstrap connection). */
    private static final class Member {
        @Nullable InetSocketAddress data;
        final @Nullable Channel channel;
        final CompletableFuture<Object> decision = new CompletableFuture<>();
        final CompletableFuture<InetSocketAddress[]> table = new CompletableFuture<>();

        Member(@Nullable InetSocketAddress data, @Nullable Channel channel) {
            this.data = data;
            this.channel = channel;
        }
    }

    private BootstrapRoot(byte[] token, boolean allowLocal, Channel server) {
        this.allowLocal = allowLocal;
        this.server = server;
        this.id = new HostUniqueId(ListenAddresses.advertised((InetSocketAddress) server.localAddress()), token);
    }

    /**
     * Opens a root listening on the bind address. {@code allowLocal} false makes even ranks of this JVM use the
     * network (tests of the network path in one JVM).
     */
    static BootstrapRoot open(byte[] token, boolean allowLocal) {
        var group = HostNetwork.acquire();
        try {
            // Set once bound; a connection can only know the port after this method returned the id.
            java.util.concurrent.atomic.AtomicReference<BootstrapRoot> self = new java.util.concurrent.atomic.AtomicReference<>();
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            Wire.configure(ch);
                            // A root only ever reads one small JOIN: its connections stay at the handshake limit.
                            Wire.frameUnauthenticated(ch.pipeline());
                            ch.pipeline().addLast(new JoinHandler(self));
                        }
                    }).bind(ListenAddresses.bindAddress()).syncUninterruptibly().channel();
            BootstrapRoot root = new BootstrapRoot(token, allowLocal, server);
            self.set(root);
            OPEN.put(root.id.key(), root);
            MADE_HERE.add(root.id.key());
            root.expiry = server.eventLoop().schedule(root::expire, HostComm.initTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return root;
        } catch (RuntimeException e) {
            HostNetwork.release();
            throw e;
        }
    }

    static @Nullable BootstrapRoot find(HostUniqueId id) {
        return OPEN.get(id.key());
    }

    static boolean madeHere(HostUniqueId id) {
        return MADE_HERE.contains(id.key());
    }

    /** The data addresses of the ranks that joined so far, by rank (for tests that probe a joining rank). */
    synchronized Map<Integer, InetSocketAddress> joinedAddresses() {
        Map<Integer, InetSocketAddress> out = new HashMap<>();
        members.forEach((r, m) -> {
            if (m.data != null) out.put(r, m.data);
        });
        return out;
    }

    HostUniqueId id() {
        return id;
    }

    boolean allowsLocal() {
        return allowLocal;
    }

    /** A thread of this JVM joins; completes with its HostComm (all ranks local) or {@link #NETWORK}. */
    synchronized CompletableFuture<Object> joinLocal(int n, int rank) {
        Member m = new Member(null, null);
        String refused = admit(n, rank, m);
        if (refused != null) return CompletableFuture.failedFuture(new org.jccl.core.error.InvalidUsageException(refused));
        progress();
        return m.decision;
    }

    /** A local rank that goes over the network gives its data address; completes with every rank's. */
    synchronized CompletableFuture<InetSocketAddress[]> provideLocal(int rank, InetSocketAddress data) {
        Member m = members.get(rank);
        if (m == null) return CompletableFuture.failedFuture(new IllegalStateException("rank " + rank + " never joined"));
        m.data = data;
        progress();
        return m.table;
    }

    private synchronized void joinRemote(int n, int rank, InetSocketAddress data, Channel ch) {
        if (closed.get()) {
            reject(ch, "the unique id's root has closed (the communicator formed or timed out)");
            return;
        }
        String refused = admit(n, rank, new Member(data, ch));
        if (refused != null) {
            reject(ch, refused);
            return;
        }
        progress();
    }

    private @Nullable String admit(int n, int rank, Member m) {
        if (closed.get()) return "the unique id's root has closed";
        if (nranks < 0) nranks = n;
        if (n != nranks) return "rank " + rank + " joins with " + n + " ranks, another rank said " + nranks;
        if (rank < 0 || rank >= n) return "rank " + rank + " of " + n;
        if (members.putIfAbsent(rank, m) != null) return "rank " + rank + " joined twice";
        return null;
    }

    private void progress() {
        if (nranks < 0 || members.size() < nranks) return;
        boolean allLocal = members.values().stream().allMatch(m -> m.channel == null && m.data == null);
        if (allLocal && allowLocal) {
            LocalClique clique = new LocalClique(nranks);
            Meetings control = new Meetings();
            members.forEach((r, m) -> m.decision.complete(new HostComm(clique, control, r)));
            close();
            return;
        }
        boolean complete = true;
        for (Member m : members.values()) {
            if (m.data == null) {
                m.decision.complete(NETWORK);
                complete = false;
            }
        }
        if (!complete) return;
        InetSocketAddress[] table = new InetSocketAddress[nranks];
        members.forEach((r, m) -> table[r] = m.data);
        for (Member m : members.values()) {
            if (m.channel != null) {
                ByteBuf b = m.channel.alloc().buffer(5 + 19 * nranks).writeByte(Wire.TABLE).writeInt(nranks);
                for (InetSocketAddress a : table) Wire.writeAddress(b, a);
                Channel ch = m.channel;
                ch.writeAndFlush(b).addListener(f -> ch.close());
            } else {
                m.table.complete(table);
            }
        }
        close();
    }

    /** A joined process went away before the table was sent: its rank may join again (a restarted process). */
    private synchronized void departed(Channel ch) {
        if (closed.get()) return;
        members.values().removeIf(m -> m.channel == ch);
        if (members.isEmpty()) nranks = -1;
    }

    private synchronized void expire() {
        if (closed.get()) return;
        String why = "only " + members.size() + " of " + (nranks < 0 ? "?" : nranks) + " ranks joined within "
                + HostComm.initTimeout() + " (jccl.host.initTimeout)";
        for (Member m : members.values()) {
            if (m.channel != null) reject(m.channel, why);
            m.decision.completeExceptionally(new SystemErrorException(why));
            m.table.completeExceptionally(new SystemErrorException(why));
        }
        close();
    }

    /**
     * For tests that need the transport idle: expires every root still open in this JVM (ids made and never used
     * by earlier tests), as if their init timeout had passed.
     */
    static void expireAll() {
        for (BootstrapRoot r : OPEN.values()) r.expire();
    }

    /** Stops listening; idempotent. */
    void close() {
        if (!closed.compareAndSet(false, true)) return;
        OPEN.remove(id.key(), this);
        ScheduledFuture<?> e = expiry;
        if (e != null) e.cancel(false);
        server.close().addListener(f -> HostNetwork.release());
    }

    private static void reject(Channel ch, String why) {
        ByteBuf b = ch.alloc().buffer(64).writeByte(Wire.REJECT);
        Wire.text(b, why);
        ch.writeAndFlush(b).addListener(f -> ch.close());
    }

    /**
     * Reads one JOIN from a connection to the root; anything else, a wrong token, or no JOIN within the handshake
     * timeout is refused (counted in {@link HostNetwork#refusals}). A frame over {@link Wire#HANDSHAKE_MAX_FRAME}
     * closes the connection at its length field.
     */
    private static final class JoinHandler extends ChannelInboundHandlerAdapter {
        /** type, token, number of ranks, rank, data address. */
        static final int JOIN_BYTES = 1 + HostUniqueId.TOKEN_BYTES + 4 + 4 + 19;
        private final java.util.concurrent.atomic.AtomicReference<BootstrapRoot> rootRef;
        private @Nullable ScheduledFuture<?> handshake;
        /** A JOIN with the right token came: from now on the connection waits for the table, as long as init takes. */
        private boolean presented;
        private boolean refused;

        JoinHandler(java.util.concurrent.atomic.AtomicReference<BootstrapRoot> root) {
            this.rootRef = root;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Duration limit = HostNetwork.handshakeTimeout();
            handshake = ctx.executor().schedule(() -> {
                if (!presented) {
                    refuse(ctx, Refusal.HANDSHAKE_TIMEOUT, "no JOIN within " + limit + " (jccl.host.handshakeTimeout)", true);
                }
            }, limit.toMillis(), TimeUnit.MILLISECONDS);
            ctx.fireChannelActive();
        }

        /**
         * Counts (if the peer had not presented the token yet) and logs the refusal once, then closes, after a
         * REJECT with the reason when tellPeer.
         */
        private void refuse(ChannelHandlerContext ctx, Refusal reason, String why, boolean tellPeer) {
            cancelHandshakeTimer();
            if (refused || !ctx.channel().isActive()) return;
            refused = true;
            if (!presented) HostNetwork.refused(reason);
            LOG.warn("jccl host backend: the unique id's root refused a connection from {}: {}",
                    ctx.channel().remoteAddress(), why);
            if (tellPeer) {
                reject(ctx.channel(), why);
            } else {
                ctx.close();
            }
        }

        private void cancelHandshakeTimer() {
            ScheduledFuture<?> h = handshake;
            if (h != null) h.cancel(false);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf f = (ByteBuf) msg;
            BootstrapRoot root = rootRef.get();
            try {
                if (root == null) {
                    reject(ctx.channel(), "the root is not ready");
                    return;
                }
                if (presented || f.readableBytes() != JOIN_BYTES || f.readByte() != Wire.JOIN) {
                    refuse(ctx, Refusal.MALFORMED, "malformed join", true);
                    return;
                }
                byte[] token = new byte[HostUniqueId.TOKEN_BYTES];
                f.readBytes(token);
                if (!Wire.sameToken(root.id.token(), token)) {
                    refuse(ctx, Refusal.WRONG_TOKEN, "the unique id's token does not match (not this communicator's id)", true);
                    return;
                }
                int n = f.readInt();
                int rank = f.readInt();
                InetSocketAddress data = Wire.readAddress(f);
                presented = true;
                cancelHandshakeTimer();
                root.joinRemote(n, rank, data, ctx.channel());
            } catch (RuntimeException e) {
                refuse(ctx, Refusal.MALFORMED, "malformed join: " + e.getMessage(), true);
            } finally {
                f.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            cancelHandshakeTimer();
            BootstrapRoot root = rootRef.get();
            if (root != null) root.departed(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // Closed without a word, as before: the peer may still be sending what the decoder will not read.
            refuse(ctx, cause instanceof TooLongFrameException ? Refusal.OVERSIZED_FRAME : Refusal.MALFORMED,
                    cause.toString(), false);
        }
    }
}
