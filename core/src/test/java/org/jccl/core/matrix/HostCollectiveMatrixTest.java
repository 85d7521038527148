package org.jccl.core.matrix;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;

/** The collective matrix on the host backend, 1 to 8 ranks, bit-identical to the reference. */
class HostCollectiveMatrixTest extends CollectiveMatrixSuite {
    @Override
    protected int[] rankCounts() {
        return new int[] {1, 2, 3, 4, 8};
    }

    @Override
    protected List<Communicator> openCommunicators(int n) throws Exception {
        return Jccl.backend(BackendKind.HOST).initAll(n).get(30, TimeUnit.SECONDS);
    }

    @Override
    protected double tolerance(DataType type) {
        return 0;
    }
}
