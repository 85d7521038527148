package org.jccl.rma.pairs;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.rendezvous.Rendezvous;

/** One rank per process of {@link EveryPairPuts}: {@code gpu} on the rank's local GPU, else the host backend over TCP. */
public final class EveryPairPutsMain {
    private EveryPairPutsMain() {
    }

    /** Runs one rank; exits 1 when a value was wrong. */
    public static void main(String[] args) throws Exception {
        boolean gpu = args.length > 0 && args[0].equals("gpu");
        Backend backend = gpu ? Jccl.backend(BackendKind.NCCL) : Jccl.backend(BackendKind.HOST);
        List<String> wrong;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator comm = backend.initRank(rdzv.shareUniqueIdNow("id", backend::newUniqueId), rdzv.worldSize(), rdzv.rank(),
                     gpu ? rdzv.localRank() : -1).get(120, TimeUnit.SECONDS)) {
            wrong = EveryPairPuts.run(comm);
            System.out.println(EveryPairPuts.summary(comm.rank(), comm.size(), wrong));
        }
        System.exit(wrong.isEmpty() ? 0 : 1);
    }
}
