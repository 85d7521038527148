package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link LsaTeamMain}: one process per GPU under jccl's launcher, every GPU of the host in one LSA team. */
@Tag("gpu")
class LsaTeamGpuTest {
    @Test
    void oneProcessPerGpuFormsOneLsaTeam() {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.features().has(Feature.DEV_COMM_CREATE), "device communicators need NCCL 2.28+, loaded " + nccl.describe());
        assumeTrue(nccl.deviceCount() >= 2, "needs two GPUs");
        int n = nccl.deviceCount();
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", String.valueOf(n), "--", LsaTeamMain.class.getName()),
                new PrintStream(outBytes, true, StandardCharsets.UTF_8), new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        String out = outBytes.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < n; r++) {
            String line = "[rank " + r + "] rank " + r + ": LSA team and all-to-all all right";
            assertTrue(out.lines().anyMatch(line::equals), out);
        }
    }
}
