package org.jccl.core.ranks;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link EveryRankChecks} on every GPU present: one process driving them all, and one process per GPU. */
@Tag("gpu")
class EveryRankGpuTest {
    static Backend nccl;

    @BeforeAll
    static void open() {
        nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.deviceCount() >= 2, "needs two GPUs");
    }

    @Test
    void oneProcessDrivingEveryGpu() throws Exception {
        EveryRankRuns.inOneProcess(nccl, nccl.deviceCount(), nccl.features().has(Feature.COMM_SHRINK));
    }

    @Test
    void oneProcessPerGpuUnderTheLauncher() {
        EveryRankRuns.underTheLauncher(nccl.deviceCount(), "gpu");
    }
}
