package org.jccl.core.host;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One rank of a multi-process test job: a JVM on this test's class path running {@code mainClass} with the
 * rendezvous variables of an external server, its output collected line by line with the time each line arrived.
 */
final class RankProcess {
    /** A line of output and when the test saw it ({@link System#nanoTime()}). */
    record Line(long nanos, String text) {
    }

    final int rank;
    final Process process;
    private final List<Line> lines = new CopyOnWriteArrayList<>();

    private RankProcess(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    /** Starts rank {@code rank} of {@code n}, joined through the rendezvous server on {@code port}. */
    static RankProcess start(Class<?> mainClass, List<String> args, int port, int rank, int n, String secret,
                             Map<String, String> moreEnv) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        Map<String, String> env = pb.environment();
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(n));
        env.put("JCCL_RENDEZVOUS_SERVER", "external");
        env.put("JCCL_RENDEZVOUS_SECRET", secret);
        env.putAll(moreEnv);
        pb.redirectErrorStream(true);
        RankProcess r = new RankProcess(rank, pb.start());
        Thread reader = new Thread(r::collect, "rank-" + rank + "-output");
        reader.setDaemon(true);
        reader.start();
        return r;
    }

    private void collect() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) lines.add(new Line(System.nanoTime(), line));
        } catch (IOException e) {
            lines.add(new Line(System.nanoTime(), "reader failed: " + e));
        }
    }

    /** The lines so far. */
    List<String> lines() {
        return lines.stream().map(Line::text).toList();
    }

    /** Whether a line so far contains {@code fragment}. */
    boolean said(String fragment) {
        return lines.stream().anyMatch(l -> l.text().contains(fragment));
    }

    /** When the first line containing {@code fragment} arrived, or -1. */
    long saidAt(String fragment) {
        return lines.stream().filter(l -> l.text().contains(fragment)).mapToLong(Line::nanos).findFirst().orElse(-1);
    }

    /** The whole output, for failure messages. */
    String output() {
        return "rank " + rank + ":\n" + String.join("\n", lines());
    }

    /** Sends one command line to the rank's standard input. */
    void command(String line) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Sends a POSIX signal ({@code STOP}, {@code CONT}, {@code KILL}) to the process. */
    void signal(String signal) throws IOException, InterruptedException {
        int code = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start().waitFor();
        if (code != 0) throw new IOException("kill -" + signal + " " + process.pid() + " exited with " + code);
    }
}
