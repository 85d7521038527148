package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A Java program run by an end-to-end test on the host backend, its output kept in a file of the test's folder. */
final class HostProgram {
    private HostProgram() {
    }

    /** Runs {@code command}, stdout and stderr together; fails unless it exits 0 within 3 minutes. */
    static String run(Path work, List<String> command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("JCCL_BACKEND", "host");
        Path log = Files.createTempFile(work, "out", ".txt");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        boolean ended = p.waitFor(3, TimeUnit.MINUTES);
        if (!ended) p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(ended, "still running after 3 minutes: " + String.join(" ", command) + "\n" + output);
        assertEquals(0, p.exitValue(), output);
        return output;
    }
}
