package org.jccl.core.ranks;

import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link EveryRankChecks} on the host backend: 2 to 5 ranks in one JVM, and 4 processes under the launcher. */
class EveryRankTest {
    @ParameterizedTest(name = "{0} ranks in one JVM")
    @ValueSource(ints = {2, 3, 4, 5})
    void everyRankInOneJvm(int ranks) throws Exception {
        EveryRankRuns.inOneProcess(Jccl.backend(BackendKind.HOST), ranks, true);
    }

    @Test
    void fourProcessesUnderTheLauncher() {
        EveryRankRuns.underTheLauncher(4, "host");
    }
}
