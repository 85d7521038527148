package org.jccl.core.launch;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.host.CrossProcessRankMain;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job of two nodes on one machine: each "host" is its own loopback address (127.0.0.2 for node 0, 127.0.0.3 for
 * node 1; network namespaces would need root), each node started by its own launcher with its own node rank. Node 0's
 * launcher runs in this JVM, node 1's in a child JVM.
 */
class MultiNodeLaunchTest {
    private static final String NODE0 = "127.0.0.2";
    private static final String NODE1 = "127.0.0.3";

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
    @TempDir
    Path dir;
    private Path secretFile;
    private int port;

    @BeforeEach
    void loopbackHostsAndASharedSecret() throws IOException {
        for (String host : List.of(NODE0, NODE1)) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
            } catch (IOException e) {
                Assumptions.abort("this machine cannot bind " + host + " (loopback is not 127.0.0.0/8): " + e);
            }
        }
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(NODE0))) {
            port = s.getLocalPort();
        }
        secretFile = dir.resolve("secret");
        Files.writeString(secretFile, "multi-node-launch-test-secret-0123456789");
    }

    @Test
    void hostBackendRanksOnTwoHostsRunEveryOperation() throws Exception {
        // One rank per node keeps it to seconds; every byte between the ranks crosses from one "host" to the other.
        List<String> program = List.of(CrossProcessRankMain.class.getName(), "ops");
        Node node1 = startNode1Launcher(arguments(1, NODE1, 1, program));
        try {
            int code = Launcher.run(arguments(0, NODE0, 1, program), out, err);
            assertEquals(0, code, this::report);
            assertTrue(node1.process.waitFor(60, TimeUnit.SECONDS), "node 1 did not finish");
            assertEquals(0, node1.process.exitValue(), node1::output);
            for (int r = 0; r < 2; r++) {
                String output = r == 0 ? out() : node1.output();
                String checked = "\\[rank " + r + "] checked [1-9][0-9]* cases, all identical to the in-JVM backend";
                assertTrue(output.lines().anyMatch(l -> l.matches(checked)), r + ":\n" + output);
                assertTrue(output.contains("[rank " + r + "] split: rank 0 of 1 in part " + r), output);
            }
        } finally {
            node1.stop();
        }
    }

    @Test
    void ranksLocalRanksAndAddressesAreAssignedPerNode() throws Exception {
        Node node1 = startNode1(List.of(LaunchedRankMain.class.getName(), "exchange"));
        try {
            assertEquals(0, Launcher.run(node0(List.of(LaunchedRankMain.class.getName(), "exchange")), out, err),
                    this::report);
            assertTrue(node1.process.waitFor(60, TimeUnit.SECONDS), "node 1 did not finish");
            assertEquals(0, node1.process.exitValue(), node1::output);
            for (int r = 0; r < 4; r++) {
                String output = r < 2 ? out() : node1.output();
                assertTrue(output.contains("[rank " + r + "] joined as rank " + r + " of 4 (local rank " + r % 2 + ")"),
                        output);
                assertTrue(output.contains("[rank " + r + "] read [hello from 0, hello from 1, hello from 2, hello from 3]"),
                        output);
                assertTrue(output.contains("[rank " + r + "] listens on " + (r < 2 ? NODE0 : NODE1)), output);
            }
        } finally {
            node1.stop();
        }
    }

    @Test
    void aFailingRankOnOneNodeStopsTheOtherNamingIt() throws Exception {
        Node node1 = startNode1(List.of(LaunchedRankMain.class.getName(), "fail", "3"));
        try {
            int code = Launcher.run(node0(List.of(LaunchedRankMain.class.getName(), "fail", "3")), out, err);
            assertEquals(1, code, this::report);
            assertTrue(err().contains("jccl launcher: node 0: rank 3 (node 1) exited with code 3; stopping the 2 rank(s) "
                    + "of this node"), err());
            assertTrue(node1.process.waitFor(60, TimeUnit.SECONDS), "node 1 did not finish");
            assertEquals(3, node1.process.exitValue(), node1::output);
            assertTrue(node1.output().contains("jccl launcher: rank 3 (node 1) exited with code 3; stopping the other 1 "
                    + "rank(s) and the other nodes"), node1.output());
        } finally {
            node1.stop();
        }
    }

    @Test
    void aKilledNodeIsNoticedAndEndsTheJob() throws Exception {
        Node node1 = startNode1(List.of(LaunchedRankMain.class.getName(), "hold"));
        try {
            CompletableFuture<Integer> node0 = CompletableFuture.supplyAsync(
                    () -> Launcher.run(node0(List.of(LaunchedRankMain.class.getName(), "hold")), out, err));
            await().atMost(Duration.ofSeconds(60)).until(() -> out().contains("[rank 0] joined")
                    && out().contains("[rank 1] joined") && node1.output().contains("[rank 2] joined")
                    && node1.output().contains("[rank 3] joined"));
            node1.process.destroy(); // its launcher's shutdown hook kills its ranks: the whole node is gone
            assertEquals(1, node0.get(60, TimeUnit.SECONDS), this::report);
            assertTrue(err().contains("(node 1) is gone: its rendezvous connection ended and its launcher reported no "
                    + "exit within 2000 ms; stopping the 2 rank(s) of this node"), err());
        } finally {
            node1.stop();
        }
    }

    private List<String> node0(List<String> program) {
        return arguments(0, NODE0, 2, program);
    }

    private List<String> arguments(int nodeRank, String localAddr, int perNode, List<String> program) {
        List<String> args = new ArrayList<>(List.of("--nnodes", "2", "--node-rank", Integer.toString(nodeRank),
                "--nproc-per-node", Integer.toString(perNode), "--master-addr", NODE0, "--master-port", Integer.toString(port),
                "--local-addr", localAddr, "--secret-file", secretFile.toString(), "--grace", "2s", "--"));
        args.addAll(program);
        return args;
    }

    /** Node 1's launcher in its own JVM, its output (both streams) in a file. */
    private Node startNode1(List<String> program) throws IOException {
        return startNode1Launcher(arguments(1, NODE1, 2, program));
    }

    private Node startNode1Launcher(List<String> launcherArguments) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Launcher.class.getName()));
        cmd.addAll(launcherArguments);
        Path log = dir.resolve("node1.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        return new Node(pb.start(), log);
    }

    private record Node(Process process, Path log) {
        /** Kills node 1's launcher and its ranks (a SIGKILL runs no hook, so the ranks are killed first). */
        void stop() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }

        String output() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(cannot read " + log + ": " + e + ")";
            }
        }
    }

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    private String report() {
        return "stdout:\n" + out() + "\nstderr:\n" + err();
    }
}
