package org.jccl.core.nccl;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.PeerWatch;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * One rank of {@link NcclPeerDeathGpuTest}: both ranks form an NCCL communicator through the rendezvous and run an
 * all-reduce; then rank 1 halts at once, as a killed process would (no clean leave), while rank 0 issues another
 * all-reduce that can never finish. PeerWatch must abort rank 0's communicator when the rendezvous reports rank 1
 * dead, failing that work with {@link RemoteErrorException}. Rank 0 prints how long that took and exits 0 only then.
 */
public final class NcclPeerDeathRankMain {
    private NcclPeerDeathRankMain() {
    }

    public static void main(String[] args) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        Rendezvous rdzv = Rendezvous.fromEnvironment();
        UniqueId id = rdzv.shareUniqueIdNow("nccl/world", nccl::newUniqueId);
        int rank = rdzv.rank();
        Communicator c = nccl.initRank(id, 2, rank, rdzv.localRank()).get(120, TimeUnit.SECONDS);
        Buffer b = nccl.allocate(c.device(), 4096);
        c.allReduce(b, b, 1024, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
        rdzv.barrierNow("formed");
        if (rank == 1) Runtime.getRuntime().halt(0); // gone without a word, like kill -9
        try (PeerWatch ignored = PeerWatch.abortOnDeath(rdzv.client(), c)) { // watches while the block runs
            long start = System.nanoTime();
            Work orphan = c.allReduce(b, b, 1024, DataType.FLOAT32, ReduceOp.SUM);
            try {
                orphan.get(120, TimeUnit.SECONDS);
                System.out.println("FAILED: the all-reduce without its peer completed");
                System.exit(1);
            } catch (ExecutionException e) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                boolean remote = e.getCause() instanceof RemoteErrorException;
                System.out.println((remote ? "peer death noticed" : "FAILED: unexpected error") + " after " + ms
                        + " ms: " + e.getCause());
                System.exit(remote ? 0 : 1);
            }
        }
    }
}
