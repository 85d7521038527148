package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Recovery on NCCL 2.29+ with two GPUs: every rank revokes, the survivor shrinks away the other and goes on. */
@Tag("gpu")
class NcclRecoveryGpuTest {
    @Test
    void revokeThenShrinkLeavesAWorkingCommunicator() throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.deviceCount() >= 2, "needs two GPUs");
        assumeTrue(nccl.features().has(Feature.COMM_REVOKE) && nccl.features().has(Feature.COMM_SHRINK),
                "needs ncclCommRevoke and ncclCommShrink (NCCL 2.29+), loaded " + nccl.describe());
        List<Communicator> comms = nccl.initAll(2).get(60, TimeUnit.SECONDS);
        Communicator survivor = null;
        try {
            var revoked0 = comms.get(0).revoke();
            var revoked1 = comms.get(1).revoke();
            revoked0.get(60, TimeUnit.SECONDS);
            revoked1.get(60, TimeUnit.SECONDS);
            survivor = comms.get(0).shrink(new int[] {1}, CommConfig.DEFAULT, comms.get(0).options()).get(60, TimeUnit.SECONDS);
            assertEquals(1, survivor.size());
            assertEquals(0, survivor.rank());
            Buffer b = nccl.allocate(survivor.device(), 16);
            b.write(0, new float[] {1, 2, 3, 4});
            survivor.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {1, 2, 3, 4}, b.readFloats(0, 4));
            b.close();
        } finally {
            if (survivor != null) survivor.close();
            for (Communicator c : comms) c.abort().get(60, TimeUnit.SECONDS);
        }
    }
}
