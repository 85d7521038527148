package org.jccl.core.matrix;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.rendezvous.Rendezvous;
import org.jspecify.annotations.Nullable;

/**
 * One rank per process of the collective matrix, joined through the rendezvous (jccl's launcher, torchrun, Slurm):
 * {@code gpu} runs {@link NcclCollectiveMatrixTest}'s matrix on the rank's local GPU, {@code host} runs
 * {@link HostCollectiveMatrixTest}'s over TCP. Every process walks the same cases in the same order; each issues and
 * checks its own rank. Prints the rank's summary, and each wrong case, and exits 1 when one was wrong.
 */
public final class MatrixRankMain {
    private MatrixRankMain() {
    }

    /** Runs one rank; {@code args[0]} is {@code gpu} or {@code host}. */
    public static void main(String[] args) throws Exception {
        boolean gpu = args.length > 0 && args[0].equals("gpu");
        Backend backend = Jccl.backend(gpu ? BackendKind.NCCL : BackendKind.HOST);
        CollectiveMatrixSuite matrix = gpu ? new NcclCollectiveMatrixTest() : new HostCollectiveMatrixTest();
        List<String> wrong;
        int rank;
        int cases;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator comm = backend.initRank(rdzv.shareUniqueIdNow("id", backend::newUniqueId), rdzv.worldSize(), rdzv.rank(),
                     gpu ? rdzv.localRank() : -1).get(120, TimeUnit.SECONDS)) {
            List<@Nullable Communicator> ranks = new ArrayList<>();
            for (int r = 0; r < comm.size(); r++) ranks.add(r == comm.rank() ? comm : null);
            rank = comm.rank();
            cases = matrix.caseCount(comm.size());
            wrong = matrix.runEveryCase(ranks);
        }
        for (String w : wrong) System.out.println("rank " + rank + " wrong: " + w);
        System.out.println("rank " + rank + ": " + cases + " cases, " + (wrong.isEmpty() ? "all right" : wrong.size() + " wrong"));
        System.exit(wrong.isEmpty() ? 0 : 1);
    }
}
