package org.jccl.core;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.Errors;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.rendezvous.RendezvousClient;

/**
 * Aborts communicators when the rendezvous reports a rank of the job dead (its process ended without leaving, or
 * went silent for {@code jccl.rendezvous.deadAfter}). NCCL may never report an error for a peer that vanished, so
 * its operations could wait forever; with a watch, every pending work of the watched communicators fails with
 * {@link RemoteErrorException} naming the dead rank, and the communicators are aborted.
 *
 * <pre>
 * try (PeerWatch watch = PeerWatch.abortOnDeath(rendezvous.client(), comm)) { ... }
 * </pre>
 */
public final class PeerWatch implements AutoCloseable {
    private final AtomicBoolean active = new AtomicBoolean(true);
    private final List<Communicator> communicators;

    private PeerWatch(List<Communicator> communicators) {
        this.communicators = communicators;
    }

    /**
     * Watches {@code client}'s job: the first rank announced dead (or one already announced) aborts every open
     * communicator in {@code communicators}. The abort runs on the rendezvous client's callback thread and never
     * blocks it.
     *
     * @param client        a connected rendezvous client of this process
     * @param communicators the communicators to abort
     * @return the watch; closing it stops watching
     */
    public static PeerWatch abortOnDeath(RendezvousClient client, Communicator... communicators) {
        Errors.requireArgument(client, "client");
        for (Communicator c : communicators) Errors.requireArgument(c, "communicator");
        PeerWatch watch = new PeerWatch(List.of(communicators));
        client.onRankDead(watch::rankDied);
        Set<Integer> already = client.announcedDeadRanks();
        if (!already.isEmpty()) watch.rankDied(already.iterator().next());
        return watch;
    }

    private void rankDied(int rank) {
        if (!active.get()) return;
        for (Communicator c : communicators) {
            if (!c.isOpen()) continue;
            c.abort(new RemoteErrorException("rank " + rank + " of the job died (reported by the rendezvous); "
                    + c + " was aborted"));
        }
    }

    /** Whether the watch still acts on deaths. */
    public boolean isActive() {
        return active.get();
    }

    /** Stops watching; the communicators are left as they are. */
    @Override
    public void close() {
        active.set(false);
    }
}
