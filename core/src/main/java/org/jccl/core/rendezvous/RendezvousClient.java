package org.jccl.core.rendezvous;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.IntConsumer;
import org.jccl.core.UniqueId;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.net.NetLoops;
import org.jspecify.annotations.Nullable;
import org.jccl.core.net.NettyDefaults;

/**
 * A connection to a {@link RendezvousServer}, authenticated as one rank (or as {@link RendezvousOptions#NO_RANK}).
 *
 * <p>The asynchronous methods are canonical: each returns a {@link CompletableFuture} completed on this client's
 * callback thread ({@code jccl-rendezvous-callbacks}), never on a Netty thread, so continuations may block briefly
 * without stalling heartbeats. Its connection runs on {@link RendezvousOptions#loops()} (by default the thread
 * {@code jccl-rendezvous-net-*} that the servers and clients of this JVM share). Each has a blocking twin ending in {@code Now} that waits at most the operation's
 * timeout. Operations that wait ({@link #get}, {@link #waitFor}, {@link #barrier}) take a timeout or use
 * {@link RendezvousOptions#timeout()}; they fail with {@link RendezvousTimeoutException} when it runs out, and every
 * pending operation fails with {@link RendezvousException} when the connection to the server is lost (closed, or
 * silent for {@link RendezvousOptions#deadAfter()}).
 *
 * <p>Keys are strings of at most 65535 UTF-8 bytes; values are byte arrays (helpers for strings and
 * {@link UniqueId}s); a frame, and so a key plus its value, must fit in {@link RendezvousOptions#maxFrameBytes()}.
 */
public final class RendezvousClient implements AutoCloseable {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    /** How long a waiting operation's answer may lag behind its server-side deadline before the client gives up. */
    private static final Duration ANSWER_GRACE = Duration.ofSeconds(5);
    private static final Duration RETRY_DELAY = Duration.ofMillis(200);
    private static final Duration LEAVE_TIMEOUT = Duration.ofSeconds(2);

    private final RendezvousOptions options;
    private final NetLoops.Lease lease;
    private final ExecutorService callbacks;
    private final Channel channel;
    private final ClientConnection connection;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RendezvousClient(RendezvousOptions options, NetLoops.Lease lease, ExecutorService callbacks, Channel channel,
                             ClientConnection connection) {
        this.options = options;
        this.lease = lease;
        this.callbacks = callbacks;
        this.channel = channel;
        this.connection = connection;
    }

    /**
     * Connects to the server at {@link RendezvousOptions#host()}:{@link RendezvousOptions#port()} and joins as
     * {@link RendezvousOptions#rank()}. A refused connection is retried until {@link RendezvousOptions#timeout()}
     * (the server may start after its clients); a refused join is not.
     *
     * @return a future of the joined client; it fails with {@link RendezvousException} (code
     *         {@link ErrorCode#AUTHENTICATION_FAILED}, {@link ErrorCode#RANK_TAKEN}, ...) if the server refuses
     */
    public static CompletableFuture<RendezvousClient> connect(RendezvousOptions options) {
        Objects.requireNonNull(options, "options");
        NetLoops.Lease lease;
        try {
            lease = options.loops().lease();
        } catch (IllegalStateException e) {
            return CompletableFuture.failedFuture(new RendezvousException("cannot connect to the rendezvous server", e));
        }
        ExecutorService callbacks = Executors.newSingleThreadExecutor(new DefaultThreadFactory("jccl-rendezvous-callbacks", true));
        CompletableFuture<RendezvousClient> result = new CompletableFuture<>();
        long deadline = System.nanoTime() + options.timeout().toNanos();
        attempt(options, lease, callbacks, deadline, result);
        result.whenComplete((c, t) -> {
            if (t != null) {
                lease.release();
                callbacks.shutdown();
            }
        });
        return result;
    }

    /**
     * Connects and waits until joined (at most {@link RendezvousOptions#timeout()}).
     *
     * @throws RendezvousException if the server refuses, or cannot be reached in time
     */
    public static RendezvousClient connectNow(RendezvousOptions options) {
        return BoundedWait.await(connect(options), options.timeout().plus(ANSWER_GRACE),
                "connecting to the rendezvous server at " + options.host() + ":" + options.port());
    }

    private static void attempt(RendezvousOptions options, NetLoops.Lease lease, ExecutorService callbacks, long deadline,
                                CompletableFuture<RendezvousClient> result) {
        // Given up (timed out, cancelled) while a retry was scheduled: the loops may be shared, so stop here.
        if (result.isDone()) return;
        EventLoopGroup loop = lease.group();
        ClientConnection connection = new ClientConnection(options, callbacks);
        Bootstrap bootstrap = new Bootstrap()
                .group(loop)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5_000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(new IdleStateHandler(options.deadAfter().toNanos(), 0, 0, TimeUnit.NANOSECONDS))
                                .addLast(new FrameDecoder(options.maxFrameBytes()))
                                .addLast(FrameEncoder.INSTANCE)
                                .addLast(connection);
                    }
                });
        bootstrap.connect(options.host(), options.port()).addListener(f -> {
            io.netty.channel.ChannelFuture cf = (io.netty.channel.ChannelFuture) f;
            if (cf.isSuccess()) {
                connection.joined.whenComplete((v, t) -> {
                    if (t == null) {
                        RendezvousClient client = new RendezvousClient(options, lease, callbacks, cf.channel(), connection);
                        if (!result.complete(client)) client.close();
                    } else {
                        cf.channel().close();
                        result.completeExceptionally(t);
                    }
                });
            } else if (cf.cause() instanceof ConnectException && System.nanoTime() < deadline) {
                loop.schedule(() -> attempt(options, lease, callbacks, deadline, result),
                        RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            } else {
                result.completeExceptionally(new RendezvousException("cannot reach the rendezvous server at "
                        + options.host() + ":" + options.port() + " within " + options.timeout().toMillis() + " ms",
                        cf.cause()));
            }
        });
    }

    /** The options this client joined with. */
    public RendezvousOptions options() {
        return options;
    }

    /** This client's rank, or {@link RendezvousOptions#NO_RANK}. */
    public int rank() {
        return options.rank();
    }

    /** Whether the connection is up. */
    public boolean isConnected() {
        return connection.isConnected();
    }

    /** Completes when the connection has ended: closed by this client, by the server, or lost. */
    public CompletableFuture<Void> disconnected() {
        return relay(connection.disconnected, Function.identity());
    }

    // ---- set / get -------------------------------------------------------------------------------------------

    /** Stores value under key, replacing any value, and wakes whoever waits for the key. */
    public CompletableFuture<Void> set(String key, byte[] value) {
        Objects.requireNonNull(value, "value");
        PayloadWriter p = new PayloadWriter().string(checkKey(key)).bytes(value);
        return relay(connection.request(MessageType.SET, p, options.timeout()), f -> null);
    }

    /** Blocking twin of {@link #set(String, byte[])}. */
    public void setNow(String key, byte[] value) {
        BoundedWait.await(set(key, value), options.timeout().plus(ANSWER_GRACE), "set(" + key + ")");
    }

    /** The value of key, waiting for it to be set for at most {@link RendezvousOptions#timeout()}. */
    public CompletableFuture<byte[]> get(String key) {
        return get(key, options.timeout());
    }

    /** The value of key, waiting for it to be set for at most timeout. */
    public CompletableFuture<byte[]> get(String key, Duration timeout) {
        PayloadWriter p = new PayloadWriter().string(checkKey(key)).i64(millis(timeout));
        return relay(connection.request(MessageType.GET, p, timeout.plus(ANSWER_GRACE)), RendezvousClient::readValue);
    }

    /** Blocking twin of {@link #get(String)}. */
    public byte[] getNow(String key) {
        return getNow(key, options.timeout());
    }

    /** Blocking twin of {@link #get(String, Duration)}. */
    public byte[] getNow(String key, Duration timeout) {
        return BoundedWait.await(get(key, timeout), timeout.plus(ANSWER_GRACE.multipliedBy(2)), "get(" + key + ")");
    }

    /** The value of key if it is set now, without waiting. */
    public CompletableFuture<Optional<byte[]>> tryGet(String key) {
        PayloadWriter p = new PayloadWriter().string(checkKey(key)).i64(0);
        return relay(connection.request(MessageType.GET, p, options.timeout()), f -> {
            PayloadReader in = new PayloadReader(f.payload());
            boolean present = in.u8() != 0;
            byte[] v = in.bytes();
            in.end();
            return present ? Optional.of(v) : Optional.empty();
        });
    }

    /** Blocking twin of {@link #tryGet(String)}. */
    public Optional<byte[]> tryGetNow(String key) {
        return BoundedWait.await(tryGet(key), options.timeout().plus(ANSWER_GRACE), "tryGet(" + key + ")");
    }

    /** Completes when every key is set, or fails after timeout. */
    public CompletableFuture<Void> waitFor(List<String> keys, Duration timeout) {
        Objects.requireNonNull(keys, "keys");
        PayloadWriter p = new PayloadWriter().i64(millis(timeout)).i32(keys.size());
        for (String k : keys) p.string(checkKey(k));
        return relay(connection.request(MessageType.WAIT, p, timeout.plus(ANSWER_GRACE)), f -> null);
    }

    /** Completes when every key is set, or fails after {@link RendezvousOptions#timeout()}. */
    public CompletableFuture<Void> waitFor(String... keys) {
        return waitFor(List.of(keys), options.timeout());
    }

    /** Blocking twin of {@link #waitFor(List, Duration)}. */
    public void waitForNow(List<String> keys, Duration timeout) {
        BoundedWait.await(waitFor(keys, timeout), timeout.plus(ANSWER_GRACE.multipliedBy(2)), "waitFor(" + keys + ")");
    }

    // ---- atomic operations -----------------------------------------------------------------------------------

    /** Adds delta to the counter at key (absent: 0) atomically and returns the new value. */
    public CompletableFuture<Long> add(String key, long delta) {
        PayloadWriter p = new PayloadWriter().string(checkKey(key)).i64(delta);
        return relay(connection.request(MessageType.ADD, p, options.timeout()), f -> {
            PayloadReader in = new PayloadReader(f.payload());
            long v = in.i64();
            in.end();
            return v;
        });
    }

    /** Blocking twin of {@link #add(String, long)}. */
    public long addNow(String key, long delta) {
        return BoundedWait.await(add(key, delta), options.timeout().plus(ANSWER_GRACE), "add(" + key + ")");
    }

    /**
     * Sets key to desired if it now holds expected (null: if it is absent), atomically.
     *
     * @return whether it was set
     */
    public CompletableFuture<Boolean> compareAndSet(String key, byte @Nullable [] expected, byte[] desired) {
        Objects.requireNonNull(desired, "desired");
        PayloadWriter p = new PayloadWriter().string(checkKey(key)).u8(expected == null ? 0 : 1)
                .bytes(expected == null ? new byte[0] : expected).bytes(desired);
        return relay(connection.request(MessageType.COMPARE_AND_SET, p, options.timeout()), RendezvousClient::readFlag);
    }

    /** Blocking twin of {@link #compareAndSet(String, byte[], byte[])}. */
    public boolean compareAndSetNow(String key, byte @Nullable [] expected, byte[] desired) {
        return BoundedWait.await(compareAndSet(key, expected, desired), options.timeout().plus(ANSWER_GRACE),
                "compareAndSet(" + key + ")");
    }

    /** Removes key; completes with whether it existed. */
    public CompletableFuture<Boolean> delete(String key) {
        PayloadWriter p = new PayloadWriter().string(checkKey(key));
        return relay(connection.request(MessageType.DELETE, p, options.timeout()), RendezvousClient::readFlag);
    }

    /** Blocking twin of {@link #delete(String)}. */
    public boolean deleteNow(String key) {
        return BoundedWait.await(delete(key), options.timeout().plus(ANSWER_GRACE), "delete(" + key + ")");
    }

    // ---- barrier and liveness --------------------------------------------------------------------------------

    /**
     * Completes when size participants (this one included) have arrived at the barrier called name, or fails after
     * timeout (and the arrival is withdrawn). A name can be reused once a round has completed.
     */
    public CompletableFuture<Void> barrier(String name, int size, Duration timeout) {
        if (size < 1) throw new InvalidArgumentException("barrier size must be >= 1, not " + size);
        PayloadWriter p = new PayloadWriter().string(checkKey(name)).i32(size).i64(millis(timeout));
        return relay(connection.request(MessageType.BARRIER, p, timeout.plus(ANSWER_GRACE)), f -> null);
    }

    /** {@link #barrier(String, int, Duration)} with {@link RendezvousOptions#timeout()}. */
    public CompletableFuture<Void> barrier(String name, int size) {
        return barrier(name, size, options.timeout());
    }

    /** Blocking twin of {@link #barrier(String, int, Duration)}. */
    public void barrierNow(String name, int size, Duration timeout) {
        BoundedWait.await(barrier(name, size, timeout), timeout.plus(ANSWER_GRACE.multipliedBy(2)), "barrier(" + name + ")");
    }

    /** The ranks the server now counts as dead (ended without leaving, or silent too long), asked of the server. */
    public CompletableFuture<Set<Integer>> deadRanks() {
        return relay(connection.request(MessageType.DEAD_RANKS, new PayloadWriter(), options.timeout()),
                f -> readRanks(f, true));
    }

    /** The ranks that now hold a live connection to the server, asked of the server. */
    public CompletableFuture<Set<Integer>> liveRanks() {
        return relay(connection.request(MessageType.DEAD_RANKS, new PayloadWriter(), options.timeout()),
                f -> readRanks(f, false));
    }

    /** Blocking twin of {@link #deadRanks()}. */
    public Set<Integer> deadRanksNow() {
        return BoundedWait.await(deadRanks(), options.timeout().plus(ANSWER_GRACE), "deadRanks()");
    }

    /** The ranks the server has announced dead to this client so far (no round trip). */
    public Set<Integer> announcedDeadRanks() {
        return connection.announcedDead();
    }

    /**
     * Calls listener with each rank the server announces dead from now on, on the callback thread (it must not
     * block for long: it delays this client's other completions).
     */
    public void onRankDead(IntConsumer listener) {
        connection.addDeathListener(Objects.requireNonNull(listener, "listener"));
    }

    // ---- typed helpers ---------------------------------------------------------------------------------------

    /** Stores text (UTF-8) under key. */
    public CompletableFuture<Void> setString(String key, String value) {
        return set(key, Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /** The text under key, waiting for it for at most timeout. */
    public CompletableFuture<String> getString(String key, Duration timeout) {
        return get(key, timeout).thenApply(b -> new String(b, StandardCharsets.UTF_8));
    }

    /** Stores one unique id under key. */
    public CompletableFuture<Void> setUniqueId(String key, UniqueId id) {
        return setUniqueIds(key, List.of(id));
    }

    /** The one unique id under key, waiting for it for at most timeout. */
    public CompletableFuture<UniqueId> getUniqueId(String key, Duration timeout) {
        return getUniqueIds(key, timeout).thenApply(ids -> {
            if (ids.size() != 1) throw new InvalidArgumentException("key '" + key + "' holds " + ids.size() + " ids, not 1");
            return ids.get(0);
        });
    }

    /** Stores several unique ids under key, in order (for {@code ncclCommInitRankScalable}). */
    public CompletableFuture<Void> setUniqueIds(String key, List<UniqueId> ids) {
        return set(key, UniqueIds.encode(ids));
    }

    /** The unique ids under key, in the order they were stored, waiting for them for at most timeout. */
    public CompletableFuture<List<UniqueId>> getUniqueIds(String key, Duration timeout) {
        return get(key, timeout).thenApply(UniqueIds::decode);
    }

    // ---- lifecycle -------------------------------------------------------------------------------------------

    /**
     * Leaves cleanly (so the server does not count this rank dead), closes the connection, stops the callback
     * thread and gives the event loop back (jccl's threads stop once nothing uses them; an application's group is
     * left running); pending operations fail. Waits at most a few seconds. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        if (channel.isActive()) {
            try {
                connection.request(MessageType.LEAVE, new PayloadWriter(), LEAVE_TIMEOUT)
                        .get(LEAVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                // The server is gone or slow: it will count this rank dead, which is then the truth.
            }
        }
        channel.close().awaitUninterruptibly(LEAVE_TIMEOUT.toMillis());
        lease.release();
        callbacks.shutdown();
    }

    @Override
    public String toString() {
        return "RendezvousClient[rank=" + options.rank() + ", server=" + options.host() + ":" + options.port() + "]";
    }

    // ---- internals -------------------------------------------------------------------------------------------

    /**
     * Completes a fresh future on the callback thread from an answer completed on the event loop, so no user
     * continuation (success or failure) ever runs on a Netty thread.
     */
    private <A, T> CompletableFuture<T> relay(CompletableFuture<A> answer, Function<A, T> parse) {
        CompletableFuture<T> result = new CompletableFuture<>();
        answer.whenComplete((a, t) -> {
            Runnable completion = () -> {
                if (t != null) {
                    result.completeExceptionally(BoundedWait.unwrap(t, "rendezvous"));
                    return;
                }
                try {
                    result.complete(parse.apply(a));
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            };
            try {
                callbacks.execute(completion);
            } catch (java.util.concurrent.RejectedExecutionException closedAlready) {
                completion.run();
            }
        });
        return result;
    }

    private static String checkKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.getBytes(StandardCharsets.UTF_8).length > PayloadWriter.MAX_STRING_BYTES) {
            throw new InvalidArgumentException("a key has at most " + PayloadWriter.MAX_STRING_BYTES + " UTF-8 bytes");
        }
        return key;
    }

    private static long millis(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) throw new InvalidArgumentException("timeout must be positive, not " + timeout);
        return Math.max(1, BoundedWait.capped(timeout).toMillis());
    }

    private static byte[] readValue(Frame f) {
        PayloadReader in = new PayloadReader(f.payload());
        in.u8();
        byte[] v = in.bytes();
        in.end();
        return v;
    }

    private static boolean readFlag(Frame f) {
        PayloadReader in = new PayloadReader(f.payload());
        boolean b = in.u8() != 0;
        in.end();
        return b;
    }

    private static Set<Integer> readRanks(Frame f, boolean dead) {
        PayloadReader in = new PayloadReader(f.payload());
        Set<Integer> deadRanks = readIntSet(in);
        Set<Integer> liveRanks = readIntSet(in);
        in.end();
        return dead ? deadRanks : liveRanks;
    }

    private static Set<Integer> readIntSet(PayloadReader in) {
        int n = in.i32();
        if (n < 0) throw new MalformedFrameException("negative count " + n);
        TreeSet<Integer> s = new TreeSet<>();
        for (int i = 0; i < n; i++) s.add(in.i32());
        return Collections.unmodifiableSet(s);
    }
}
