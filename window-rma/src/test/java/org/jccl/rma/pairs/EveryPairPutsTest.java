package org.jccl.rma.pairs;

import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link EveryPairPuts} on the host backend: 2 to 5 ranks in one JVM, and 4 processes under the launcher. */
class EveryPairPutsTest {
    @ParameterizedTest(name = "{0} ranks in one JVM")
    @ValueSource(ints = {2, 3, 4, 5})
    void everyPairInOneJvm(int ranks) throws Exception {
        PairRanks.inOneProcess(Jccl.backend(BackendKind.HOST), ranks);
    }

    @Test
    void fourProcessesUnderTheLauncher() {
        PairRanks.underTheLauncher(4, "host");
    }
}
