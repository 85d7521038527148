package org.jccl.core.net;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * Event loops that jccl starts and stops itself, counted by lease: the group is made at the first lease and shut
 * down when the last lease is given back, so idle jccl code holds no thread. Thread-safe.
 */
final class OwnedLoops implements NetLoops {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    /** Shutdown of an idle group: no quiet period (nobody uses it), a short bound on tasks that were still queued. */
    private static final long SHUTDOWN_TIMEOUT_MS = 2_000;

    private final String name;
    private final int threads;
    private @Nullable EventLoopGroup group;
    private int leases;

    OwnedLoops(String name, int threads) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) throw new InvalidArgumentException("name must not be blank");
        if (threads < 1) throw new InvalidArgumentException("threads must be >= 1, not " + threads);
        this.name = name;
        this.threads = threads;
    }

    @Override
    public synchronized Lease lease() {
        EventLoopGroup g = group;
        if (g == null) {
            // Daemon threads: a forgotten lease must not keep the JVM from exiting.
            g = new NioEventLoopGroup(threads, new DefaultThreadFactory(name, true));
            group = g;
        }
        leases++;
        return new OwnedLease(g);
    }

    /** The number of leases not given back, for tests and diagnostics. */
    synchronized int leases() {
        return leases;
    }

    private Future<?> giveBack(EventLoopGroup g) {
        synchronized (this) {
            leases--;
            if (leases > 0) return ImmediateEventExecutor.INSTANCE.newSucceededFuture(null);
            group = null;
        }
        // Outside the lock: shutdown may run listeners, and a lease taken meanwhile starts a fresh group.
        return g.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    @Override
    public String toString() {
        return "NetLoops.owned(" + name + ", " + threads + ")";
    }

    /** A lease on this instance's group of the moment; released once. */
    private final class OwnedLease implements Lease {
        private final EventLoopGroup group;
        private final AtomicBoolean released = new AtomicBoolean();

        OwnedLease(EventLoopGroup group) {
            this.group = group;
        }

        @Override
        public EventLoopGroup group() {
            return group;
        }

        @Override
        public Future<?> release() {
            if (!released.compareAndSet(false, true)) return ImmediateEventExecutor.INSTANCE.newSucceededFuture(null);
            return giveBack(group);
        }
    }
}
