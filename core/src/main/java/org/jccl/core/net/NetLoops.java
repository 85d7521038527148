package org.jccl.core.net;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Where jccl's Netty channels run: a source of {@link Lease leases} on an {@link EventLoopGroup}. Each user (a
 * rendezvous server or client, the host backend's transport) takes one lease while it is open and gives it back
 * when it closes.
 *
 * <ul>
 *   <li>{@link #owned(String, int)}: threads that jccl starts at the first lease and stops when the last one is
 *       given back, so no thread outlives its users; every user of one instance shares the same threads.</li>
 *   <li>{@link #of(EventLoopGroup)}: an application's own NIO group. jccl runs its channels there and never shuts
 *       it down; the group stays usable after every jccl user closed.</li>
 * </ul>
 *
 * Channel handlers of jccl never block, so sharing loops with an application's own channels is safe; the reverse
 * holds only if the application's handlers do not block either.
 */
public sealed interface NetLoops permits OwnedLoops, BorrowedLoops {
    /**
     * Loops owned by jccl: {@code threads} daemon threads named {@code name-<pool>-<n>}, started when the first
     * lease is taken and stopped when the last is given back (started again by a later lease).
     *
     * @param name    the thread name prefix (say what the threads serve, e.g. {@code jccl-rendezvous-net})
     * @param threads the number of event loops, at least 1
     * @throws InvalidArgumentException if the name is blank or threads is below 1
     */
    static NetLoops owned(String name, int threads) {
        return new OwnedLoops(name, threads);
    }

    /**
     * An application's group: jccl registers its channels there and never shuts it down.
     *
     * @param group a group of NIO event loops (jccl's channels are NIO channels), not shut down
     * @throws InvalidArgumentException if a loop of the group is not an NIO loop
     */
    static NetLoops of(EventLoopGroup group) {
        return new BorrowedLoops(group);
    }

    /**
     * Takes a lease: the loops stay available until it is given back.
     *
     * @throws IllegalStateException if the loops are an application's group that has been shut down
     */
    Lease lease();

    /** One user's hold on the loops; give it back exactly once (further releases do nothing). */
    interface Lease extends AutoCloseable {
        /** The group to register channels with and schedule on. */
        EventLoopGroup group();

        /**
         * Gives the lease back without blocking. When it was the last lease on jccl-owned threads, they stop.
         *
         * @return completes when the threads that this release stopped have ended, at once if it stopped none
         */
        Future<?> release();

        /** {@link #release()}, ignoring when the threads end. */
        @Override
        default void close() {
            release();
        }
    }
}
