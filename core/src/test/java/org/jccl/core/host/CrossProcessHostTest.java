package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
        survivorsFailWhenTheLastRank(p -> p.process.destroyForcibly(), "10s", "connection to rank 2");
    }

    @Test
    void aFrozenRankIsDeclaredDeadAfterThePeerTimeout() throws Exception {
        // SIGSTOP keeps the sockets open, as a crashed host or a cut network would: only silence tells.
        survivorsFailWhenTheLastRank(p -> p.signal("STOP"), "3s", "no word from rank 2");
    }

    private interface Stop {
        void stop(RankProcess p) throws Exception;
    }

    private void survivorsFailWhenTheLastRank(Stop stop, String peerTimeout, String reason) throws Exception {
        int n = 3;
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(n).secret(SECRET)
                .timeout(Duration.ofSeconds(60)).build();
        List<RankProcess> ranks = new ArrayList<>();
        try (RendezvousServer server = RendezvousServer.bindNow(options)) {
            for (int r = 0; r < n; r++) {
                ranks.add(RankProcess.start(CrossProcessRankMain.class, List.of("pipeline"), server.port(), r, n, SECRET,
                        Map.of("JCCL_HOST_PEER_TIMEOUT", peerTimeout)));
            }
            for (RankProcess r : ranks) await().atMost(Duration.ofSeconds(60)).until(() -> r.said("pipeline running"));
            long stoppedAt = System.nanoTime();
            stop.stop(ranks.get(n - 1));
            for (int r = 0; r < n - 1; r++) {
                RankProcess survivor = ranks.get(r);
                assertTrue(survivor.process.waitFor(30, TimeUnit.SECONDS), "rank " + r + " did not finish after the kill");
                assertEquals(0, survivor.process.exitValue(), survivor::output);
            }
            Duration took = Duration.ofNanos(System.nanoTime() - stoppedAt);
            assertTrue(took.compareTo(Duration.ofSeconds(30)) < 0, "survivors took " + took);
            boolean someoneSawTheCause = false;
            for (int r = 0; r < n - 1; r++) {
                String out = ranks.get(r).output();
                assertTrue(out.contains("failed with RemoteErrorException"), out);
                assertTrue(out.contains("communicator open: false"), out);
                assertTrue(out.contains("network users after close: 0"), out);
                assertTrue(out.contains("network threads left: 0"), out);
                assertTrue(out.contains("stream threads left: 0"), out);
                someoneSawTheCause |= out.contains(reason);
            }
            assertTrue(someoneSawTheCause, () -> "no survivor names '" + reason + "':\n" + ranks.stream().map(RankProcess::output).toList());
        } finally {
            for (RankProcess r : ranks) r.process.destroyForcibly();
        }
    }
}
