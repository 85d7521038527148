package org.jccl.core.host;

import java.util.List;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.UniqueId;
import org.jccl.core.matrix.CollectiveMatrixSuite;
import org.jccl.core.matrix.Reference;

/**
 * The collective matrix on the host backend's network transport (each rank joins over TCP, as ranks in separate
 * processes do), bit-identical to the plain {@link Reference}: an oracle that shares no code with the backend's
 * reduction kernels, so a reduction wrong in both the in-JVM and the network transport still fails here.
 */
class NetworkCollectiveMatrixTest extends CollectiveMatrixSuite {
    @Override
    protected int[] rankCounts() {
        return new int[] {2, 3};
    }

    @Override
    protected List<Communicator> openCommunicators(int n) throws Exception {
        return HostTesting.join(UniqueId.fromBytes(new HostDriver().newNetworkUniqueId()), n);
    }

    @Override
    protected double tolerance(DataType type) {
        return 0;
    }
}
