package com.example;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;

/** One rank per process, started by jccl's launcher: the id is shared through the rendezvous. */
public final class OneRankPerProcess {
    public static void main(String[] args) throws Exception {
        Backend backend = Jccl.backend();
        try (Rendezvous rendezvous = Rendezvous.fromEnvironment()) {
            int rank = rendezvous.rank();
            int n = rendezvous.worldSize();
            UniqueId id = rendezvous.shareUniqueIdNow("user-app", backend::newUniqueId);
            try (Communicator comm = backend.initRank(id, n, rank, rendezvous.localRank()).get(2, TimeUnit.MINUTES);
                 Buffer b = backend.allocate(comm.device(), 4L * 1000)) {
                float[] in = new float[1000];
                Arrays.fill(in, rank + 1);
                b.write(0, in);
                comm.allReduce(b, b, 1000, DataType.FLOAT32, ReduceOp.SUM).get(2, TimeUnit.MINUTES);
                System.out.println("rank " + rank + " of " + n + ": sum = " + b.readFloats(0, 1000)[999]);
            }
        }
    }
}
