package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jccl.nccl.log=slf4j} with the real library, in a JVM of its own (NCCL reads NCCL_DEBUG_FILE once per
 * process): NCCL's INFO lines of an all-reduce's set-up reach SLF4J's logger {@code nccl}, and none is printed by NCCL
 * itself.
 */
@Tag("gpu")
class NcclLogGpuTest {
    @Test
    void ncclsOwnLinesArriveThroughSlf4j(@TempDir Path dir) throws Exception {
        assumeTrue(Jccl.backend(BackendKind.NCCL).deviceCount() >= 1, "needs a GPU");
        Path log = dir.resolve("out.txt");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djccl.nccl.log=slf4j", "-Djccl.nccl.env.NCCL_DEBUG=INFO", "-cp", System.getProperty("java.class.path"),
                NcclLogRankMain.class.getName())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "still running after 3 minutes");
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        String all = String.join("\n", lines);
        assertEquals(0, p.exitValue(), all);
        assertTrue(lines.contains("all-reduce ok"), all);
        assertTrue(lines.stream().anyMatch(l -> l.contains("[jccl-nccl-log] INFO nccl - ") && l.contains("] NCCL version ")), all);
        assertTrue(lines.stream().noneMatch(l -> l.contains(" NCCL INFO ")), "NCCL printed lines itself:\n" + all);
    }
}
