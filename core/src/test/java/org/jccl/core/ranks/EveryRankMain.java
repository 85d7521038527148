package org.jccl.core.ranks;

import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.spi.Feature;

/**
 * One rank per process of {@link EveryRankChecks}, joined through the rendezvous (jccl's launcher, torchrun, Slurm):
 * {@code gpu} on the rank's local GPU, else on the host backend over TCP. Prints the rank's summary and exits 1 when a
 * value was wrong.
 */
public final class EveryRankMain {
    private EveryRankMain() {
    }

    /** Runs one rank; {@code args[0]} is {@code gpu} or {@code host}. */
    public static void main(String[] args) throws Exception {
        boolean gpu = args.length > 0 && args[0].equals("gpu");
        Backend backend = gpu ? Jccl.backend(BackendKind.NCCL) : Jccl.backend(BackendKind.HOST);
        EveryRankChecks.Result result;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator comm = backend.initRank(rdzv.shareUniqueIdNow("id", backend::newUniqueId), rdzv.worldSize(), rdzv.rank(),
                     gpu ? rdzv.localRank() : -1).get(120, TimeUnit.SECONDS)) {
            // Host ranks in several processes cannot shrink (a new unique id is the way there).
            result = EveryRankChecks.run(backend, comm, gpu && backend.features().has(Feature.COMM_SHRINK));
            System.out.println(result.summary(comm.rank()));
        }
        System.exit(result.wrong().isEmpty() ? 0 : 1);
    }
}
