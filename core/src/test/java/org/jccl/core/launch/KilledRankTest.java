package org.jccl.core.launch;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousServer;
import org.junit.jupiter.api.Test;

/** A rank process killed with SIGKILL shows up as dead, at the server and at the other ranks, within deadAfter. */
class KilledRankTest {
    private static final String SECRET = "killed-rank-test-secret-0123456789";
    private static final Duration DEAD_AFTER = Duration.ofSeconds(3);

    @Test
    void aKilledRankIsReportedDead() throws Exception {
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(2).secret(SECRET)
                .heartbeatInterval(Duration.ofMillis(500)).deadAfter(DEAD_AFTER).timeout(Duration.ofSeconds(30)).build();
        try (RendezvousServer server = RendezvousServer.bindNow(options);
             RendezvousClient rank0 = RendezvousClient.connectNow(options.toBuilder().port(server.port()).rank(0).build())) {
            Set<Integer> heard = ConcurrentHashMap.newKeySet();
            rank0.onRankDead(heard::add);
            Process rank1 = startRank1(server.port());
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> server.liveRanks().contains(1));
                rank1.destroyForcibly(); // SIGKILL: no shutdown hook, no LEAVE
                rank1.waitFor(10, TimeUnit.SECONDS);
                Duration within = DEAD_AFTER.plusSeconds(2);
                await().atMost(within).until(() -> server.deadRanks().contains(1));
                await().atMost(within).until(() -> heard.contains(1));
                assertEquals(Set.of(1), rank0.deadRanksNow());
                assertEquals(Set.of(0), server.liveRanks());
            } finally {
                rank1.destroyForcibly();
            }
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
