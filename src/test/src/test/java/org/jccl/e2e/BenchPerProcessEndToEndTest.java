package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.launch.Launcher;
import org.jccl.examples.bench.Bench;
import org.junit.jupiter.api.Test;

/**
 * The benchmark with one process per rank, started by jccl's launcher and joined through the rendezvous: on a machine
 * without a GPU the ranks are host-backend processes talking over TCP. Rank 0 reports every operation, each checked.
 */
class BenchPerProcessEndToEndTest {
    @Test
    void twoProcessesJoinedThroughTheRendezvousMeasureEveryOperationCorrectly() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", "2", "--", Bench.class.getName(), "--per-process", "-o", "all",
                        "-b", "1K", "-e", "4K", "-f", "4", "-w", "1", "-n", "2", "--json",
                        "--compile-warmup", "64"),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + "\n" + err.toString(StandardCharsets.UTF_8));
        List<String> results = text.lines().filter(l -> l.startsWith("[rank 0] {")).toList();
        assertEquals(9 * 2, results.size(), text);
        for (String line : results) assertTrue(line.contains("\"wrong\":0"), line);
        assertTrue(text.lines().noneMatch(l -> l.startsWith("[rank 1] {")), "only rank 0 reports:\n" + text);
    }
}
