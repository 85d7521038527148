package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jccl.core.jfr.NcclActivityEvent;
import org.jccl.core.jfr.OperationEvent;

/** One run of {@link NcclProfilerRankMain} in a JVM of its own: its output and the events it recorded. */
record NcclProfilerRun(String output, List<RecordedEvent> operations, List<RecordedEvent> activities) {
    static NcclProfilerRun start(Path dir, int ranks, List<String> properties, Map<String, String> env)
            throws IOException, InterruptedException {
        Path recording = dir.resolve("run.jfr");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(properties);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), NcclProfilerRankMain.class.getName(),
                recording.toString(), Integer.toString(ranks)));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "still running after 3 minutes");
        String output = Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        List<RecordedEvent> events = RecordingFile.readAllEvents(recording);
        return new NcclProfilerRun(output,
                events.stream().filter(e -> e.getEventType().getName().equals(OperationEvent.NAME)).toList(),
                events.stream().filter(e -> e.getEventType().getName().equals(NcclActivityEvent.NAME)).toList());
    }

    /** The communicator id the program printed. */
    String communicator() {
        String line = output.lines().filter(l -> l.startsWith("communicator ")).findFirst().orElseThrow(() -> new AssertionError(output));
        return line.split(" ")[1];
    }

    /** The NCCL events attributed to jccl operation {@code sequence}, of kind {@code kind}. */
    List<RecordedEvent> activities(long sequence, String kind) {
        return activities.stream().filter(e -> e.getLong("sequence") == sequence && e.getString("kind").equals(kind)).toList();
    }

    /** The sequence numbers of the all-reduce works jccl recorded, in issue order, and of the groups. */
    List<Long> sequences(String operation) {
        return operations.stream().filter(e -> e.getString("operation").equals(operation))
                .map(e -> e.getLong("sequence")).sorted().toList();
    }
}
