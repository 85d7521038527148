package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.examples.bench.Bench;
import org.junit.jupiter.api.Test;

/** The benchmark CLI on the host backend: every operation, a small sweep, every result checked (#wrong = 0). */
class BenchEndToEndTest {
    private static final Pattern WRONG = Pattern.compile("\"wrong\":([^,}]+)");

    /** Every measured form of a JSON bandwidth line was checked and had no wrong element; returns how many forms. */
    private static int assertAllFormsRight(String line) {
        Matcher m = WRONG.matcher(line);
        int forms = 0;
        while (m.find()) {
            assertEquals("0", m.group(1), line);
            forms++;
        }
        return forms;
    }

    private static List<String> run(String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status = Bench.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals(0, status);
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void everyOperationOfASmallSweepIsCorrect() throws Exception {
        System.setProperty("jccl.backend", "host");
        List<String> lines = run("--ranks", "3", "-o", "all", "-b", "64", "-e", "4K", "-f", "4", "-w", "1", "-n", "3", "--json",
                "--compile-warmup", "128");
        assertEquals(9 * 4, lines.size(), String.join("\n", lines));
        for (String line : lines) {
            assertTrue(line.contains("\"wrong\":0"), line);
            assertTrue(line.contains("\"mode\":\"bandwidth\""), line);
            assertEquals(2, assertAllFormsRight(line), "out-of-place and in-place, as nccl-tests: " + line);
        }
    }

    @Test
    void inPlaceFormsAreCorrectToo() throws Exception {
        System.setProperty("jccl.backend", "host");
        List<String> lines = run("--ranks", "4", "-o", "allreduce,allgather,reducescatter,gather,scatter", "-b", "1K", "-e", "1K",
                "-d", "int32", "-r", "max", "--in-place", "-w", "0", "-n", "2", "--json", "--compile-warmup", "0");
        assertEquals(5, lines.size(), String.join("\n", lines));
        for (String line : lines) {
            assertTrue(line.contains("\"wrong\":0"), line);
            assertEquals(1, assertAllFormsRight(line), "--in-place alone: " + line);
            assertTrue(line.contains("\"out_of_place\":null"), line);
        }
    }

    @Test
    void latencyAndPipelineModesReport() throws Exception {
        System.setProperty("jccl.backend", "host");
        List<String> latency = run("--ranks", "2", "--mode", "latency", "-b", "8", "-n", "200", "--json");
        assertEquals(1, latency.size());
        assertTrue(latency.get(0).contains("\"p99_us\":"), latency.get(0));
        // Samples after pauses (1.5 ms: the engine's threads have started to park) still all complete.
        List<String> paused = run("--ranks", "2", "--mode", "latency", "-b", "8", "-n", "20", "--pause-us", "1500", "--json");
        assertEquals(1, paused.size());
        assertTrue(paused.get(0).contains("\"samples\":20"), paused.get(0));
        List<String> pipeline = run("--ranks", "2", "--mode", "pipeline", "-b", "8", "-n", "2000", "--inflight", "16", "--json");
        assertEquals(1, pipeline.size());
        assertTrue(pipeline.get(0).contains("\"ops\":2000"), pipeline.get(0));
    }

    @Test
    void theReactivePathMeasuresTheSameThings() throws Exception {
        System.setProperty("jccl.backend", "host");
        List<String> bandwidth = run("--ranks", "2", "--path", "reactive", "-o", "allreduce,sendrecv", "-b", "1K", "-e", "1K",
                "-w", "1", "-n", "3", "--json", "--compile-warmup", "64");
        assertEquals(2, bandwidth.size());
        for (String line : bandwidth) assertTrue(line.contains("\"path\":\"reactive\"") && line.contains("\"wrong\":0"), line);
        List<String> pipeline = run("--ranks", "2", "--path", "reactive", "--mode", "pipeline", "-b", "8", "-n", "1000",
                "--inflight", "8", "--json");
        assertTrue(pipeline.get(0).contains("\"ops\":1000") && pipeline.get(0).contains("\"path\":\"reactive\""), pipeline.get(0));
    }

    @Test
    void badArgumentsExitWithStatusTwo() throws Exception {
        assertEquals(2, Bench.run(new String[] {"-o", "allshuffle"}, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    }
}
