package org.jccl.e2e;

import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * One rank of a small job under jccl's launcher: joins through the rendezvous (Netty), forms a host communicator over
 * TCP, all-reduces, meets at a barrier and prints {@code rank N ok}. {@link JdkWarningsEndToEndTest} runs it.
 */
public final class BarrierRankMain {
    private BarrierRankMain() {
    }

    /**
     * Runs this rank.
     *
     * @param args none
     * @throws Exception if a step fails
     */
    public static void main(String[] args) throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            UniqueId id = rdzv.shareUniqueIdNow("barrier-rank-id", host::newUniqueId);
            try (Communicator comm = host.initRank(id, n, rank, -1).get(2, TimeUnit.MINUTES);
                 Buffer b = host.allocate(0, 4)) {
                b.write(0, new float[] {rank + 1});
                comm.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM).get(2, TimeUnit.MINUTES);
                comm.barrier().get(2, TimeUnit.MINUTES);
                float sum = b.readFloats(0, 1)[0];
                if (sum != n * (n + 1) / 2f) throw new IllegalStateException("rank " + rank + " got " + sum);
                System.out.println("rank " + rank + " ok");
            }
        }
    }
}
