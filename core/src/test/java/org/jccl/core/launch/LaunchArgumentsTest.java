package org.jccl.core.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** The multi-node options: defaults, numbering, and command lines that cannot make a job. */
class LaunchArgumentsTest {
    @Test
    void oneNodeKeepsItsDefaultsAndNprocStillWorks() {
        LaunchArguments a = LaunchArguments.parse(List.of("--nproc", "3", "--", "Main"));
        assertEquals(List.of(3, 1, 0, "127.0.0.1", 0, 3), List.of(a.processes(), a.nodes(), a.nodeRank(),
                a.masterAddr(), a.masterPort(), a.worldSize()));
        assertEquals(null, a.localAddr());
    }

    @Test
    void severalNodesNumberRanksNodeByNodeOnTorchrunsDefaultPort() {
        LaunchArguments a = LaunchArguments.parse(List.of("--nnodes", "3", "--node-rank", "2", "--nproc-per-node", "4",
                "--master-addr", "node0", "--local-addr", "10.0.0.3", "--", "Main"));
        assertEquals(List.of(12, 29500, 8, 11, 2, 0), List.of(a.worldSize(), a.masterPort(), a.globalRank(0),
                a.globalRank(3), a.nodeOf(11), a.nodeOf(3)));
        assertEquals("10.0.0.3", a.localAddr());
    }

    @Test
    void commandLinesThatCannotMakeAJobAreRefused() {
        assertRefused("--node-rank must be below --nnodes 2, not 2",
                "--nnodes", "2", "--node-rank", "2", "--nproc", "1", "--", "Main");
        assertRefused("--master-port 0 cannot be told to other nodes",
                "--nnodes", "2", "--master-port", "0", "--nproc", "1", "--", "Main");
        assertRefused("is a wildcard, not an address other nodes can reach",
                "--master-addr", "0.0.0.0", "--nproc", "1", "--", "Main");
        assertRefused("--nnodes must be at least 1", "--nnodes", "0", "--nproc", "1", "--", "Main");
    }

    @Test
    void severalNodesWithoutASharedSecretAreRefusedBeforeAnythingStarts() {
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
        int code = Launcher.run(List.of("--nnodes", "2", "--nproc", "1", "--master-port", "1", "--", "Main"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), err);
        assertEquals(Launcher.USAGE_ERROR, code);
        assertTrue(errBytes.toString(StandardCharsets.UTF_8).contains("needs one secret on every node"), errBytes.toString());
    }

    private static void assertRefused(String message, String... args) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> LaunchArguments.parse(List.of(args)));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
