package org.jccl.core.matrix;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.launch.LaunchedRanks;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The collective matrix with one process per GPU under jccl's launcher, every GPU present (NcclCollectiveMatrixTest
 * drives them all from one process): what separate processes change (NCCL's shared-memory and peer-to-peer set-up
 * between processes, the rendezvous) is checked in every operation, type and reduction.
 */
@Tag("gpu")
class NcclMatrixProcessesTest {
    @Test
    void oneProcessPerGpuUnderTheLauncher() {
        int gpus = Jccl.backend(BackendKind.NCCL).deviceCount();
        assumeTrue(gpus >= 2, "needs two GPUs");
        LaunchedRanks.assertEveryRankSays(gpus, "cases, all right", MatrixRankMain.class.getName(), "gpu");
    }
}
