package org.jccl.core.nccl;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;

/** {@link NcclLogGpuTest}'s program: one NCCL rank on GPU 0 runs an all-reduce, so NCCL logs its set-up. */
public final class NcclLogRankMain {
    private NcclLogRankMain() {
    }

    public static void main(String[] args) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        List<Communicator> comms = nccl.initAll(1).get(120, TimeUnit.SECONDS);
        try (Buffer b = nccl.allocate(0, 4096)) {
            comms.get(0).allReduce(b, b, 1024, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
        } finally {
            comms.forEach(Communicator::close);
        }
        System.out.println("all-reduce ok");
    }
}
