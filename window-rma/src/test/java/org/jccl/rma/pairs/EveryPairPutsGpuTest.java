package org.jccl.rma.pairs;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link EveryPairPuts} on every GPU present (NCCL 2.29.2+): one process driving them all, and one process per GPU. */
@Tag("gpu")
class EveryPairPutsGpuTest {
    static Backend nccl;

    @BeforeAll
    static void open() {
        nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.deviceCount() >= 2, "needs two GPUs");
        assumeTrue(nccl.features().has(Feature.PUT_SIGNAL), "put/signal/wait need NCCL 2.29.2+, loaded " + nccl.describe());
    }

    @Test
    void oneProcessDrivingEveryGpu() throws Exception {
        PairRanks.inOneProcess(nccl, nccl.deviceCount());
    }

    @Test
    void oneProcessPerGpuUnderTheLauncher() {
        PairRanks.underTheLauncher(nccl.deviceCount(), "gpu");
    }
}
