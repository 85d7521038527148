package org.jccl.core.ranks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.launch.Launcher;
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
        int n = nccl.deviceCount();
        List<EveryRankChecks.Result> results = RanksInOneProcess.run(nccl, n, nccl.features().has(Feature.COMM_SHRINK));
        for (int r = 0; r < n; r++) assertEquals(List.of(), results.get(r).wrong(), results.get(r).summary(r));
    }

    @Test
    void oneProcessPerGpuUnderTheLauncher() {
        int n = nccl.deviceCount();
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", String.valueOf(n), "--", EveryRankMain.class.getName(), "gpu"),
                new PrintStream(outBytes, true, StandardCharsets.UTF_8), new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        String out = outBytes.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        assertEquals(n, out.split("all right", -1).length - 1, out);
    }
}
