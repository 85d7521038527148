package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.launch.LaunchedRankMain;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousServer;
import org.junit.jupiter.api.Test;

/** A rank the rendezvous reports dead aborts the watched communicators (host backend standing in for NCCL). */
class PeerWatchTest {
    private static final String SECRET = "peer-watch-test-secret-0123456789";

    @Test
    void aDeadRankAbortsTheWatchedCommunicatorsAndFailsTheirPendingWork() throws Exception {
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(2).secret(SECRET)
                .heartbeatInterval(Duration.ofMillis(500)).deadAfter(Duration.ofSeconds(3)).timeout(Duration.ofSeconds(30)).build();
        Backend host = Jccl.backend(BackendKind.HOST);
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        Process rank1 = null;
        try (RendezvousServer server = RendezvousServer.bindNow(options);
             RendezvousClient rank0 = RendezvousClient.connectNow(options.toBuilder().port(server.port()).rank(0).build());
             Buffer b = host.allocate(0, 8);
             PeerWatch watch = PeerWatch.abortOnDeath(rank0, comms.get(0))) {
            rank1 = startRank1(server.port());
            await().atMost(Duration.ofSeconds(30)).until(() -> server.liveRanks().contains(1));
            // Rank 1 of the communicator never joins this all-reduce, as if its process had died.
            Work pending = comms.get(0).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM);
            rank1.destroyForcibly();
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> pending.get(30, TimeUnit.SECONDS));
            assertInstanceOf(RemoteErrorException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("rank 1 of the job died"), e.getCause().getMessage());
            assertFalse(comms.get(0).isOpen());
            assertTrue(watch.isActive());
        } finally {
            if (rank1 != null) rank1.destroyForcibly();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void aClosedWatchLeavesTheCommunicatorsAlone() throws Exception {
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(2).secret(SECRET)
                .heartbeatInterval(Duration.ofMillis(500)).deadAfter(Duration.ofSeconds(3)).timeout(Duration.ofSeconds(30)).build();
        Backend host = Jccl.backend(BackendKind.HOST);
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        Process rank1 = null;
        try (RendezvousServer server = RendezvousServer.bindNow(options);
             RendezvousClient rank0 = RendezvousClient.connectNow(options.toBuilder().port(server.port()).rank(0).build())) {
            PeerWatch watch = PeerWatch.abortOnDeath(rank0, comms.get(0));
            watch.close();
            rank1 = startRank1(server.port());
            await().atMost(Duration.ofSeconds(30)).until(() -> server.liveRanks().contains(1));
            rank1.destroyForcibly();
            await().atMost(Duration.ofSeconds(10)).until(() -> rank0.announcedDeadRanks().contains(1));
            assertTrue(comms.get(0).isOpen());
        } finally {
            if (rank1 != null) rank1.destroyForcibly();
            for (Communicator c : comms) c.close();
        }
    }

    private static Process startRank1(int port) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LaunchedRankMain.class.getName(), "hold"));
        Map<String, String> env = pb.environment();
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", "1");
        env.put("WORLD_SIZE", "2");
        env.put("JCCL_RENDEZVOUS_SERVER", "external");
        env.put("JCCL_RENDEZVOUS_SECRET", SECRET);
        env.put("JCCL_RENDEZVOUS_HEARTBEAT", "500ms");
        env.put("JCCL_RENDEZVOUS_DEAD_AFTER", "3s");
        pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        return pb.start();
    }
}
