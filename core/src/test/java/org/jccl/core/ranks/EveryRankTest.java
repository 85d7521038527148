package org.jccl.core.ranks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.launch.Launcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link EveryRankChecks} on the host backend: 2 to 5 ranks in one JVM, and 4 processes under the launcher. */
class EveryRankTest {
    @ParameterizedTest(name = "{0} ranks in one JVM")
    @ValueSource(ints = {2, 3, 4, 5})
    void everyRankInOneJvm(int ranks) throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        List<EveryRankChecks.Result> results = RanksInOneProcess.run(host, ranks, true);
        for (int r = 0; r < ranks; r++) {
            EveryRankChecks.Result result = results.get(r);
            assertEquals(List.of(), result.wrong(), result.summary(r));
            assertTrue(result.checked() > ranks * EveryRankChecks.COUNT, result.summary(r));
        }
    }

    @Test
    void fourProcessesUnderTheLauncher() {
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", "4", "--", EveryRankMain.class.getName(), "host"),
                new PrintStream(outBytes, true, StandardCharsets.UTF_8), new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        String out = outBytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < 4; r++) {
            String prefix = "[rank " + r + "] rank " + r + ": ";
            assertTrue(out.lines().anyMatch(line -> line.startsWith(prefix) && line.endsWith("values checked, all right")), out);
        }
    }
}
