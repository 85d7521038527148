package org.jccl.examples.serving;

import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.reactive.ReactiveCommunicator;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One rank of a service, as the launcher starts it: joins the rendezvous, makes the communicator (this process's GPU,
 * else a host rank), and runs rank 0's front or another rank's step loop until rank 0 stops; then prints its step
 * count and order hash, which must match on every rank. Exits with 3 when the step loop failed.
 */
public final class ServiceRanks {
    private ServiceRanks() {
    }

    /** Makes a rank's step loop over its communicator. */
    @FunctionalInterface
    public interface StepsFactory<S extends OrderedSteps<?>> {
        S create(Backend backend, ReactiveCommunicator comm, Scheduler steps);
    }

    /** Rank 0's serving, until its step loop ended; returns whether it ended cleanly. */
    @FunctionalInterface
    public interface RankZero<S extends OrderedSteps<?>> {
        boolean serve(Communicator comm, S steps);
    }

    /** Runs this process's rank of the service {@code name}; {@code unit} names a step in the output (e.g. "batches"). */
    public static <S extends OrderedSteps<?>> void run(String name, String unit, StepsFactory<S> factory, RankZero<S> rankZero)
            throws Exception {
        Backend backend = Jccl.backend();
        Scheduler stepThread = Schedulers.newSingle(name + "-steps");
        boolean clean = true;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow(name + "-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, rdzv.worldSize(), rdzv.rank(), device).get(60, TimeUnit.SECONDS);
            try (S steps = factory.create(backend, ReactiveCommunicator.of(comm), stepThread)) {
                if (rdzv.rank() == 0) clean = rankZero.serve(comm, steps);
                else steps.follow().block();
                System.out.println("rank " + rdzv.rank() + ": " + steps.completed() + " " + unit + ", order hash "
                        + Long.toHexString(steps.orderHash()));
            } finally {
                comm.close();
                stepThread.dispose();
            }
        }
        if (!clean) System.exit(3);
    }
}
