package org.jccl.core.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Runs a rank program in several processes under jccl's launcher, as a test does, and checks what each rank said. */
public final class LaunchedRanks {
    private LaunchedRanks() {
    }

    /**
     * Launches {@code ranks} processes of {@code mainClass} with {@code args}, asserts that the launcher exited 0 and
     * that every rank printed a line starting {@code "rank R: "} and ending with {@code ending}.
     */
    public static void assertEveryRankSays(int ranks, String ending, String mainClass, String... args) {
        List<String> command = new ArrayList<>(List.of("--nproc", String.valueOf(ranks), "--", mainClass));
        command.addAll(List.of(args));
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int code = Launcher.run(command, new PrintStream(outBytes, true, StandardCharsets.UTF_8),
                new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        String out = outBytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < ranks; r++) {
            String prefix = "[rank " + r + "] rank " + r + ": ";
            assertTrue(out.lines().anyMatch(line -> line.startsWith(prefix) && line.endsWith(ending)), out);
        }
    }
}
