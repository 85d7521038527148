package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jccl.core.launch.Launcher;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousServer;
import org.junit.jupiter.api.Test;

/** The host backend with one JVM per rank on loopback: every operation, and a rank killed with SIGKILL. */
class CrossProcessHostTest {
    private static final String SECRET = "cross-process-host-test-secret-0123456789";

    @Test
    void threeProcessesRunEveryOperationBitIdenticalToTheInJvmBackend() {
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
        int code = Launcher.run(List.of("--nproc", "3", "--", CrossProcessRankMain.class.getName(), "ops"), out, err);
        String o = outBytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + o + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        int cases = OpSuite.cases().size();
        for (int r = 0; r < 3; r++) {
            assertTrue(o.contains("[rank " + r + "] checked " + cases + " cases, all identical to the in-JVM backend"), o);
            assertTrue(o.contains("[rank " + r + "] network threads left: 0"), o);
            assertTrue(o.contains("[rank " + r + "] stream threads left: 0"), o);
            assertTrue(o.contains("[rank " + r + "] split: rank " + (r / 2) + " of " + (r % 2 == 0 ? 2 : 1) + " in part " + (r % 2)), o);
        }
    }

    @Test
    void killingOneRankFailsTheOthersPendingWorkWithRemoteErrorAndReleasesEverything() throws Exception {
        survivorsFailWhenTheLastRank(Process::destroyForcibly, "10s", "connection to rank 2");
    }

    @Test
    void aFrozenRankIsDeclaredDeadAfterThePeerTimeout() throws Exception {
        // SIGSTOP keeps the sockets open, as a crashed host or a cut network would: only silence tells.
        survivorsFailWhenTheLastRank(p -> signal(p, "STOP"), "3s", "no word from rank 2");
    }

    private static void signal(Process p, String signal) {
        try {
            assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor());
        } catch (Exception e) {
            throw new AssertionError("cannot send SIG" + signal, e);
        }
    }

    private void survivorsFailWhenTheLastRank(java.util.function.Consumer<Process> stop, String peerTimeout, String reason)
            throws Exception {
        int n = 3;
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(n).secret(SECRET)
                .timeout(Duration.ofSeconds(60)).build();
        List<Process> processes = new ArrayList<>();
        List<List<String>> lines = new ArrayList<>();
        try (RendezvousServer server = RendezvousServer.bindNow(options)) {
            for (int r = 0; r < n; r++) {
                List<String> output = new CopyOnWriteArrayList<>();
                lines.add(output);
                processes.add(start(server.port(), r, n, peerTimeout, output));
            }
            for (int r = 0; r < n; r++) {
                List<String> output = lines.get(r);
                await().atMost(Duration.ofSeconds(60)).until(() -> output.contains("pipeline running"));
            }
            long stoppedAt = System.nanoTime();
            stop.accept(processes.get(n - 1));
            for (int r = 0; r < n - 1; r++) {
                Process survivor = processes.get(r);
                assertTrue(survivor.waitFor(30, TimeUnit.SECONDS), "rank " + r + " did not finish after the kill");
                assertEquals(0, survivor.exitValue(), "rank " + r + ":\n" + String.join("\n", lines.get(r)));
            }
            Duration took = Duration.ofNanos(System.nanoTime() - stoppedAt);
            assertTrue(took.compareTo(Duration.ofSeconds(30)) < 0, "survivors took " + took);
            boolean someoneSawTheCause = false;
            for (int r = 0; r < n - 1; r++) {
                String out = String.join("\n", lines.get(r));
                assertTrue(out.contains("failed with RemoteErrorException"), out);
                assertTrue(out.contains("communicator open: false"), out);
                assertTrue(out.contains("network users after close: 0"), out);
                assertTrue(out.contains("network threads left: 0"), out);
                assertTrue(out.contains("stream threads left: 0"), out);
                someoneSawTheCause |= out.contains(reason);
            }
            assertTrue(someoneSawTheCause, () -> "no survivor names '" + reason + "':\n" + lines);
        } finally {
            for (Process p : processes) p.destroyForcibly();
        }
    }

    private static Process start(int port, int rank, int n, String peerTimeout, List<String> output) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), CrossProcessRankMain.class.getName(), "pipeline"));
        Map<String, String> env = pb.environment();
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(n));
        env.put("JCCL_RENDEZVOUS_SERVER", "external");
        env.put("JCCL_RENDEZVOUS_SECRET", SECRET);
        env.put("JCCL_HOST_PEER_TIMEOUT", peerTimeout);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) output.add(line);
            } catch (java.io.IOException e) {
                output.add("reader failed: " + e);
            }
        }, "rank-" + rank + "-output");
        reader.setDaemon(true);
        reader.start();
        return p;
    }
}
