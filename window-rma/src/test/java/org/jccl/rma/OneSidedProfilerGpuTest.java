package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.jfr.NcclActivityEvent;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jccl.nccl.profiler=on} around one-sided calls on the real library (2.29.2+, at least 2 GPUs: NCCL reports no
 * profiler event for a one-rank communicator's collective, which is the control here). The all-reduce's API events
 * come attributed to it; NCCL 2.29's put/signal and wait report none (its one-sided calls start no API event and launch no
 * kernel plan the profiler sees), and this test says so by failing the day they do, so the docs can follow.
 */
@Tag("gpu")
class OneSidedProfilerGpuTest {
    @Test
    void theAllReducesEventsAreAttributedAndOneSidedCallsReportNone(@TempDir Path dir) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.features().has(Feature.PUT_SIGNAL), "put/signal needs NCCL 2.29.2+, loaded " + nccl.describe());
        assumeTrue(nccl.deviceCount() >= 2, "needs 2 GPUs");
        Path recording = dir.resolve("run.jfr");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djccl.nccl.profiler=on", "-cp", System.getProperty("java.class.path"), OneSidedProfilerMain.class.getName(),
                recording.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile()).start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "still running after 3 minutes");
        String output = Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        String[] said = output.lines().filter(l -> l.startsWith("communicator ")).findFirst().orElseThrow().split(" ");
        long allReduce = Long.parseLong(said[3]);
        List<RecordedEvent> events = RecordingFile.readAllEvents(recording).stream()
                .filter(e -> e.getEventType().getName().equals(NcclActivityEvent.NAME)).toList();
        Map<Long, String> kindsBySequence = new TreeMap<>(events.stream().collect(Collectors.groupingBy(e -> e.getLong("sequence"),
                Collectors.mapping(e -> e.getString("kind") + ":" + e.getString("function"), Collectors.joining(",")))));
        System.out.println(output + "NCCL events by jccl sequence: " + kindsBySequence);
        // On window buffers NCCL runs its symmetric kernels, whose plans report the API events but no Coll task.
        assertTrue(events.stream().anyMatch(e -> e.getLong("sequence") == allReduce && e.getString("kind").equals("CollApi")
                && "AllReduce".equals(e.getString("function")) && e.getString("communicator").equals(said[1])), kindsBySequence.toString());
        for (int i = 5; i <= 7; i += 2) {
            long sequence = Long.parseLong(said[i]);
            assertFalse(kindsBySequence.containsKey(sequence), "NCCL now reports events for " + said[i - 1] + ": " + kindsBySequence);
        }
    }
}
