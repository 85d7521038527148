package org.jccl.core.rendezvous;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.jccl.core.UniqueId;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;
import org.jccl.core.net.NettyDefaults;

/**
 * One rank's membership of a job: its {@link RendezvousClient}, and the server too when this rank hosts it
 * ({@link StoreHost#RANK0} and rank 0). The usual start of a rank:
 *
 * <pre>{@code
 * try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
 *     UniqueId id = rdzv.shareUniqueIdNow("nccl/world", backend::newUniqueId);
 *     // create the communicator with id, rdzv.rank(), rdzv.worldSize()
 * }
 * }</pre>
 *
 * It is backend-agnostic: the caller passes how a unique id is made.
 */
public final class Rendezvous implements AutoCloseable {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final Duration HOST_POLL = Duration.ofMillis(20);

    private final RendezvousClient client;
    private final @Nullable RendezvousServer server;
    private final RendezvousOptions options;

    private Rendezvous(RendezvousClient client, @Nullable RendezvousServer server, RendezvousOptions options) {
        this.client = client;
        this.server = server;
        this.options = options;
    }

    /**
     * Joins the job described by the environment a launcher set ({@link RendezvousOptions#fromEnvironment()}).
     *
     * @throws InvalidArgumentException if the rank, world size or secret is missing
     * @throws RendezvousException      if the server cannot be reached or refuses this rank
     */
    public static Rendezvous fromEnvironment() {
        return join(RendezvousOptions.fromEnvironment());
    }

    /**
     * Joins the job: rank 0 first starts the server if it hosts it, then every rank connects.
     *
     * @param options with a rank (0 or more) and a world size (1 or more)
     */
    public static Rendezvous join(RendezvousOptions options) {
        Objects.requireNonNull(options, "options");
        if (options.rank() < 0 || options.worldSize() < 1) {
            throw new InvalidArgumentException("a rank needs its rank and the world size (RANK and WORLD_SIZE), not rank "
                    + options.rank() + " of " + options.worldSize());
        }
        RendezvousServer server = null;
        if (options.storeHost() == StoreHost.RANK0 && options.rank() == 0) server = RendezvousServer.bindNow(options);
        try {
            RendezvousOptions clientOptions = server == null ? options : options.toBuilder().port(server.port()).build();
            return new Rendezvous(RendezvousClient.connectNow(clientOptions), server, options);
        } catch (RuntimeException e) {
            if (server != null) server.close();
            throw e;
        }
    }

    /** The client of this rank. */
    public RendezvousClient client() {
        return client;
    }

    /** This rank. */
    public int rank() {
        return options.rank();
    }

    /** The number of ranks. */
    public int worldSize() {
        return options.worldSize();
    }

    /** This rank's index on its host (which GPU it should use). */
    public int localRank() {
        return options.localRank();
    }

    /**
     * Rank 0 makes a unique id with create and stores it under key; every other rank waits for it (at most
     * {@link RendezvousOptions#timeout()}). Every rank's future completes with the same id.
     */
    public CompletableFuture<UniqueId> shareUniqueId(String key, Supplier<UniqueId> create) {
        return shareUniqueIds(key, 1, create).thenApply(ids -> ids.get(0));
    }

    /** Blocking twin of {@link #shareUniqueId(String, Supplier)}. */
    public UniqueId shareUniqueIdNow(String key, Supplier<UniqueId> create) {
        return BoundedWait.await(shareUniqueId(key, create), options.timeout().plusSeconds(10), "sharing unique id " + key);
    }

    /**
     * Like {@link #shareUniqueId}, for count ids (the several ids of {@code ncclCommInitRankScalable}), made by
     * rank 0 in order.
     */
    public CompletableFuture<List<UniqueId>> shareUniqueIds(String key, int count, Supplier<UniqueId> create) {
        Objects.requireNonNull(create, "create");
        if (count < 1) throw new InvalidArgumentException("count must be >= 1, not " + count);
        if (rank() == 0) {
            List<UniqueId> ids = new ArrayList<>(count);
            for (int i = 0; i < count; i++) ids.add(Objects.requireNonNull(create.get(), "create returned null"));
            List<UniqueId> made = List.copyOf(ids);
            return client.setUniqueIds(key, made).thenApply(v -> made);
        }
        return client.getUniqueIds(key, options.timeout()).thenApply(ids -> {
            if (ids.size() != count) {
                throw new InvalidArgumentException("key '" + key + "' holds " + ids.size() + " ids, not " + count);
            }
            return ids;
        });
    }

    /** Waits until every rank of the job has reached the barrier called name (at most the options' timeout). */
    public void barrierNow(String name) {
        client.barrierNow(name, worldSize(), options.timeout());
    }

    /**
     * Leaves the job. When this rank hosts the server, it first waits (at most the options' timeout) for the other
     * ranks to leave or die, so that it does not pull the store from under them, then closes it.
     */
    @Override
    public void close() {
        client.close();
        RendezvousServer s = server;
        if (s == null) return;
        long deadline = System.nanoTime() + options.timeout().toNanos();
        while (!s.liveRanks().isEmpty() && System.nanoTime() < deadline) LockSupport.parkNanos(HOST_POLL.toNanos());
        s.close();
    }
}
