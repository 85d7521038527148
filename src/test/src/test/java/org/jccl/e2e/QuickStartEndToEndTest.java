package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.examples.QuickStart;
import org.junit.jupiter.api.Test;

/** The README's main job, run in-process on the host backend: every check passes and the report says so. */
class QuickStartEndToEndTest {
    @Test
    void theMainJobPassesOnThreeHostRanks() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int failures = QuickStart.run(Jccl.backend(BackendKind.HOST), 3, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String report = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, failures, report);
        assertTrue(report.contains("backend host, 3 rank(s)"), report);
        assertTrue(report.contains("each operation moves 1048576 float32 elements (4 MiB) per rank"), report);
        assertEquals(6, report.lines().filter(l -> l.endsWith(" ok")).count(), report);
        assertTrue(report.contains("all results correct"), report);
    }
}
