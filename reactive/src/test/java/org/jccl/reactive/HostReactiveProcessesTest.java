package org.jccl.reactive;

import org.jccl.core.launch.LaunchedRanks;
import org.junit.jupiter.api.Test;

/** The reactive API one process per rank on the host backend, as {@link NcclReactiveProcessesTest} runs it on GPUs. */
class HostReactiveProcessesTest {
    @Test
    void threeProcessesOneRankEach() {
        LaunchedRanks.assertEveryRankSays(3, "values checked, all right", ReactiveRankMain.class.getName(), "host");
    }
}
