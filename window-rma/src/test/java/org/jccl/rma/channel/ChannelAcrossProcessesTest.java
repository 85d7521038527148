package org.jccl.rma.channel;

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

/** One-sided puts and the block channel between two processes on the host backend's TCP transport. */
class ChannelAcrossProcessesTest {
    private static final String SECRET = "channel-across-processes-test-secret-0123";

    @Test
    void putsAndEveryBlockCrossTheProcessesIntact() {
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
        int code = Launcher.run(List.of("--nproc", "2", "--", ChannelRankMain.class.getName(), "check"), out, err);
        String o = outBytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + o + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        assertTrue(o.contains("[rank 1] put across processes: identical"), o);
        assertTrue(o.contains("[rank 0] producer sent 500"), o);
        assertTrue(o.contains("[rank 1] consumer received 500, wrong 0"), o);
    }

    @Test
    void killingTheProducerEndsTheConsumerWithATypedError() throws Exception {
        RendezvousOptions options = RendezvousOptions.builder().port(0).worldSize(2).secret(SECRET)
                .timeout(Duration.ofSeconds(60)).build();
        List<Process> processes = new ArrayList<>();
        List<String> consumer = new CopyOnWriteArrayList<>();
        try (RendezvousServer server = RendezvousServer.bindNow(options)) {
            processes.add(start(server.port(), 0, new CopyOnWriteArrayList<>()));
            processes.add(start(server.port(), 1, consumer));
            await().atMost(Duration.ofSeconds(60)).until(() -> consumer.contains("consumer receiving"));
            processes.get(0).destroyForcibly();
            assertTrue(processes.get(1).waitFor(30, TimeUnit.SECONDS), "the consumer did not end after the kill");
            String lines = String.join("\n", consumer);
            assertTrue(lines.contains("consumer failed with RemoteErrorException"), lines);
        } finally {
            for (Process p : processes) p.destroyForcibly();
        }
    }

    private static Process start(int port, int rank, List<String> output) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ChannelRankMain.class.getName(), "endless"));
        Map<String, String> env = pb.environment();
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", "2");
        env.put("JCCL_RENDEZVOUS_SERVER", "external");
        env.put("JCCL_RENDEZVOUS_SECRET", SECRET);
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
