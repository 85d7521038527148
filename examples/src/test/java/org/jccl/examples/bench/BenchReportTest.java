package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/** The whole benchmark on the host backend: the table of every operation, and the plot beside a compared run. */
class BenchReportTest {
    private static final List<String> ALL = List.of("allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall",
            "gather", "scatter", "sendrecv");

    @TempDir
    Path dir;

    @BeforeAll
    static void hostBackend() {
        System.setProperty("jccl.backend", "host");
    }

    private static List<String> run(int expectedStatus, String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        assertEquals(expectedStatus, Bench.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8)));
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void everyOperationIsNamedOnItsRowsAndTheFooterFollows() throws Exception {
        List<String> lines = run(0, "--ranks", "2", "-o", "all", "-b", "1K", "-e", "4K", "-f", "4", "-w", "0", "-n", "1", "--compile-warmup", "0");
        List<String> rows = lines.stream().filter(l -> !l.startsWith("#")).toList();
        assertEquals(ALL.size() * 2, rows.size(), String.join("\n", lines));
        for (int i = 0; i < rows.size(); i++) {
            List<String> cells = List.of(rows.get(i).strip().split("\\s+"));
            assertEquals(ALL.get(i / 2), cells.get(0), rows.get(i));
            assertEquals(14, cells.size(), "operation, description, then both forms: " + rows.get(i));
            assertEquals("0", cells.get(9), "out-of-place #wrong: " + rows.get(i));
            assertEquals("0", cells.get(13), "in-place #wrong: " + rows.get(i));
        }
        int n = lines.size();
        assertEquals("# Out of bounds values : 0 OK", lines.get(n - ALL.size() - 2));
        for (int i = 0; i < ALL.size(); i++) {
            assertTrue(lines.get(n - ALL.size() - 1 + i).matches("# Avg bus bandwidth    : \\d+\\.\\d{3} \\(" + ALL.get(i) + "\\)"),
                    lines.get(n - ALL.size() - 1 + i));
        }
        assertTrue(lines.get(n - 1).matches("# Avg bus bandwidth    : \\d+\\.\\d{3}"), lines.get(n - 1));
    }

    @Test
    void symmetricBuffersComeFromAPoolAndEveryResultIsChecked() throws Exception {
        List<String> lines = run(0, "--ranks", "2", "-o", "allreduce,allgather", "-b", "1K", "-e", "16K", "-f", "4", "-w", "0",
                "-n", "2", "--compile-warmup", "0", "--symmetric");
        assertTrue(lines.get(0).contains("symmetric buffers"), lines.get(0));
        List<String> rows = lines.stream().filter(l -> !l.startsWith("#")).toList();
        assertEquals(2 * 3, rows.size(), String.join("\n", lines));
        for (String row : rows) {
            List<String> cells = List.of(row.strip().split("\\s+"));
            assertEquals("0", cells.get(9), "out-of-place #wrong: " + row);
            assertEquals("0", cells.get(13), "in-place #wrong: " + row);
        }
    }

    @Test
    void thePlotHasOneCurvePerOperationAndTheComparedOnes() throws Exception {
        Path raw = Files.writeString(dir.resolve("raw.txt"), "# allreduce (raw)\n4096 3.5\n1024 1.25\n");
        Path plot = dir.resolve("bw.svg");
        run(0, "--ranks", "2", "-o", "allreduce,allgather,sendrecv", "-b", "1K", "-e", "16K", "-f", "4", "-w", "0", "-n", "1", "-c", "0", "--compile-warmup", "0",
                "--json", "--plot", plot.toString(), "--compare", raw.toString());
        List<Element> curves = SvgPlotTest.curves(SvgPlotTest.parse(Files.readString(plot)));
        List<String> labels = new ArrayList<>();
        for (Element c : curves) labels.add(c.getAttribute("data-label"));
        assertEquals(List.of("allreduce (core)", "allgather (core)", "sendrecv (core)", "allreduce (raw)"), labels);
        for (int i = 0; i < 3; i++) assertEquals(List.of(1024L, 4096L, 16384L), SvgPlotTest.sizesInOrder(curves.get(i)));
        assertEquals(List.of(1024L, 4096L), SvgPlotTest.sizesInOrder(curves.get(3)));
    }

    @Test
    void plotAndCompareMistakesAreBadArguments() throws Exception {
        Path svg = dir.resolve("x.svg");
        run(2, "--mode", "latency", "--plot", svg.toString());
        run(2, "--compare", svg.toString());
        run(2, "--plot", svg.toString(), "--compare", dir.resolve("missing.json").toString());
        assertTrue(Files.notExists(svg));
    }
}
