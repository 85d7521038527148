package org.jccl.core.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher with real JVMs on loopback. */
class LauncherTest {
    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void threeRanksExchangeValuesAndMeetAtBarriers() {
        int code = Launcher.run(List.of("--nproc", "3", "--", LaunchedRankMain.class.getName(), "exchange"), out, err);
        assertEquals(0, code, () -> "stdout:\n" + out() + "\nstderr:\n" + err());
        String expected = "read [hello from 0, hello from 1, hello from 2]";
        for (int r = 0; r < 3; r++) {
            assertTrue(out().contains("[rank " + r + "] joined as rank " + r + " of 3 (local rank " + r + ")"), out());
            assertTrue(out().contains("[rank " + r + "] " + expected), out());
        }
        // Every rank saw the same id, the one rank 0 made.
        long distinctIds = out().lines().filter(l -> l.contains("] unique id ")).map(l -> l.substring(l.indexOf("unique id")))
                .distinct().count();
        assertEquals(1, distinctIds, out());
        assertTrue(out().lines().allMatch(l -> l.startsWith("[rank ")), "every line is prefixed:\n" + out());
    }

    @Test
    void aFailingRankStopsTheOthersWithAClearMessage() {
        int code = Launcher.run(List.of("--nproc", "3", "--grace", "5s", "--",
                LaunchedRankMain.class.getName(), "fail", "1"), out, err);
        assertEquals(3, code, () -> "stdout:\n" + out() + "\nstderr:\n" + err());
        assertTrue(err().contains("[rank 1] failing on purpose"), err());
        assertTrue(err().contains("jccl launcher: rank 1 exited with code 3; stopping the other 2 rank(s)"), err());
    }

    @Test
    void theSecretComesFromTheSecretFileAndNeverFromTheCommandLine(@TempDir Path dir) throws Exception {
        Path secretFile = dir.resolve("secret");
        String secret = "a-secret-from-a-file-0123456789";
        Files.writeString(secretFile, secret + "\n");
        int code = Launcher.run(List.of("--nproc", "2", "--secret-file", secretFile.toString(), "--",
                LaunchedRankMain.class.getName(), "exchange"), out, err);
        assertEquals(0, code, () -> "stdout:\n" + out() + "\nstderr:\n" + err());
        assertTrue(out().contains("[rank 1] read [hello from 0, hello from 1]"), out());
        assertTrue(out().lines().anyMatch(l -> l.startsWith("[rank 0] command line: ")
                && l.contains(LaunchedRankMain.class.getName())), "the rank saw its real command line:\n" + out());
        assertTrue(!out().contains(secret) && !err().contains(secret), "the secret appears on no command line or output");
    }

    @Test
    void ncclVariablesGivenAsPropertiesReachTheRanksEnvironment() {
        String property = org.jccl.core.config.JcclSettings.NCCL_ENV_PREFIX + "NCCL_JCCL_LAUNCH_PROBE";
        System.setProperty(property, "from-the-launcher");
        try {
            int code = Launcher.run(List.of("--nproc", "1", "--", LaunchedRankMain.class.getName(), "exchange"), out, err);
            assertEquals(0, code, () -> "stdout:\n" + out() + "\nstderr:\n" + err());
            assertTrue(out().contains("[rank 0] NCCL_JCCL_LAUNCH_PROBE=from-the-launcher"), out());
        } finally {
            System.clearProperty(property);
        }
    }

    @Test
    void badCommandLinesAreRefusedWithTheUsage() {
        assertEquals(Launcher.USAGE_ERROR, Launcher.run(List.of("--nproc", "2"), out, err));
        assertTrue(err().contains("missing '--'"), err());
        assertTrue(err().contains("usage:"), err());
        assertEquals(Launcher.USAGE_ERROR, Launcher.run(List.of("--nproc", "zero", "--", "Main"), out, err));
        assertEquals(Launcher.USAGE_ERROR, Launcher.run(List.of("--", "Main"), out, err));
        assertEquals(Launcher.USAGE_ERROR, Launcher.run(List.of("--nproc", "1", "--bogus", "--", "Main"), out, err));
        assertNotEquals(0, err().length());
    }
}
