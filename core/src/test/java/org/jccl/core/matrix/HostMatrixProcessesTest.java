package org.jccl.core.matrix;

import org.jccl.core.launch.LaunchedRanks;
import org.junit.jupiter.api.Test;

/**
 * The collective matrix with one process per rank on the host backend, as {@link NcclMatrixProcessesTest} runs it on
 * GPUs: proves that each process, holding one rank, issues its share of every case and checks its own output.
 */
class HostMatrixProcessesTest {
    @Test
    void threeProcessesOneRankEach() {
        LaunchedRanks.assertEveryRankSays(3, "cases, all right", MatrixRankMain.class.getName(), "host");
    }
}
