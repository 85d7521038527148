package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The start-up line: one short line a person reads at a glance, not the reasons other backends did not load. */
class StartupLineTest {
    @Test
    void theHostBackendsLineNamesVersionBackendAndCoresInAtMost120Characters() {
        String line = StartupLine.of(StartupLine.version(), Jccl.backend(BackendKind.HOST), "auto: no GPU");
        assertTrue(line.length() <= StartupLine.MAX, line.length() + ": " + line);
        assertTrue(line.startsWith("jccl " + StartupLine.version() + ": backend host (auto: no GPU), pure Java, "), line);
        assertTrue(line.endsWith(" CPU cores"), line);
        assertFalse(line.contains("cannot open"), "why NCCL did not load belongs at DEBUG: " + line);
    }

    @Test
    void theVersionComesFromTheBuild() {
        assertFalse(StartupLine.version().contains("${"), StartupLine.version());
    }

    @Test
    void aLineTooLongIsCutWithAnEllipsis() {
        String cut = StartupLine.fit("x".repeat(300));
        assertEquals(StartupLine.MAX, cut.length());
        assertTrue(cut.endsWith("…"));
    }
}
