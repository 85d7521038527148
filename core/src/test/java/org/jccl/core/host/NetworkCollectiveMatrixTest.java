package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < n; r++) joining.add(host().initRank(id, n, r, -1));
        List<Communicator> comms = new ArrayList<>();
        for (CompletableFuture<Communicator> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        return comms;
    }

    @Override
    protected double tolerance(DataType type) {
        return 0;
    }
}
