package org.jccl.rma.kv;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One rank of a two-process KV job: a JVM on this test's class path running {@link KvRankMain}, joined through an
 * external rendezvous server (the variables a launcher would set), its output collected line by line with the time
 * each line arrived, so a test can tell how long after a kill a rank reported a failure.
 */
final class KvProcess {
    /** A line of output and when the test saw it ({@link System#nanoTime()}). */
    private record Line(long nanos, String text) {
    }

    final int rank;
    final Process process;
    private final List<Line> lines = new CopyOnWriteArrayList<>();

    private KvProcess(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    /** Starts rank {@code rank} of 2 in {@code mode}, joined through the rendezvous server on {@code port}. */
    static KvProcess start(String mode, List<String> args, int port, int rank, String secret) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), KvRankMain.class.getName(), mode));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        Map<String, String> env = pb.environment();
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", "2");
        env.put("JCCL_RENDEZVOUS_SERVER", "external");
        env.put("JCCL_RENDEZVOUS_SECRET", secret);
        pb.redirectErrorStream(true);
        KvProcess p = new KvProcess(rank, pb.start());
        Thread reader = new Thread(p::collect, "kv-rank-" + rank + "-output");
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    private void collect() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) lines.add(new Line(System.nanoTime(), line));
        } catch (IOException e) {
            lines.add(new Line(System.nanoTime(), "reader failed: " + e));
        }
    }

    /** The lines so far that contain {@code fragment}. */
    List<String> linesWith(String fragment) {
        return lines.stream().map(Line::text).filter(t -> t.contains(fragment)).toList();
    }

    /** Whether a line so far contains {@code fragment}. */
    boolean said(String fragment) {
        return !linesWith(fragment).isEmpty();
    }

    /** When the last line containing {@code fragment} arrived, or -1. */
    long lastSaidAt(String fragment) {
        return lines.stream().filter(l -> l.text().contains(fragment)).mapToLong(Line::nanos).max().orElse(-1);
    }

    /** The whole output, for failure messages. */
    String output() {
        return "rank " + rank + ":\n" + String.join("\n", lines.stream().map(Line::text).toList());
    }
}
