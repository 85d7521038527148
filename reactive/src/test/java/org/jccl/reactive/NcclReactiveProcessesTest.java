package org.jccl.reactive;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.launch.LaunchedRanks;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The reactive API with one process per GPU under jccl's launcher, every GPU present ({@link NcclReactiveTest} drives
 * them all from one process): every collective as a Mono with each rank as root, a send/recv ring as a group, a bounded
 * pipeline and a barrier, every value checked on every rank.
 */
@Tag("gpu")
class NcclReactiveProcessesTest {
    @Test
    void oneProcessPerGpuUnderTheLauncher() {
        int gpus = Jccl.backend(BackendKind.NCCL).deviceCount();
        assumeTrue(gpus >= 2, "needs two GPUs");
        LaunchedRanks.assertEveryRankSays(gpus, "values checked, all right", ReactiveRankMain.class.getName(), "gpu");
    }
}
