package org.jccl.core.rendezvous;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;

/**
 * A program written once for any launcher: joins through {@link Rendezvous#fromEnvironment()}, makes a host-backend
 * communicator, all-reduces {@code rank + 1} and prints what it found.
 */
public final class SchedulerRankMain {
    private SchedulerRankMain() {
    }

    /** Runs one rank. */
    public static void main(String[] args) throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            try (Communicator comm = host.initRank(rdzv.shareUniqueIdNow("id", host::newUniqueId), n, rank, -1)
                    .get(60, TimeUnit.SECONDS);
                 Buffer b = host.allocate(0, 4)) {
                b.write(0, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, rank + 1));
                comm.allReduce(b, b, 1, DataType.INT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
                ByteBuffer got = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
                b.read(0, got);
                System.out.println(JobEnvironment.detect().scheduler() + ": rank " + rank + " of " + n + " (local rank "
                        + rdzv.localRank() + ") sum " + got.getInt(0));
            }
        }
    }
}
