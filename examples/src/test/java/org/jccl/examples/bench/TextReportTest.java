package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** nccl-tests' table: both forms side by side under their headings, the operation column, and the footer. */
class TextReportTest {
    private static final Pattern TOKEN = Pattern.compile("\\S+");

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    private Report report(boolean nameOperations) {
        Report r = Report.to(new PrintStream(bytes, true, StandardCharsets.UTF_8), false, nameOperations);
        r.header("title", "bandwidth");
        return r;
    }

    private List<String> lines() {
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static BandwidthRow row(BenchOp op, long size, Timing outOfPlace, Timing inPlace) {
        return new BandwidthRow(op, "core", size, size / 4, "float32", op.reduces ? "sum" : "none", op.rooted ? 0 : -1, outOfPlace, inPlace);
    }

    private static Timing timing(double micros, double busbw, long wrong) {
        return new Timing(micros, busbw / 2, busbw, wrong, 0);
    }

    /** The character index just past each whitespace-separated token. */
    private static List<Integer> tokenEnds(String line) {
        List<Integer> ends = new ArrayList<>();
        Matcher m = TOKEN.matcher(line);
        while (m.find()) ends.add(m.end());
        return ends;
    }

    private static List<String> tokens(String line) {
        return List.of(line.strip().split("\\s+"));
    }

    @Test
    void outOfPlaceAndInPlaceColumnsSitSideBySideUnderTheirHeadings() {
        Report r = report(false);
        r.bandwidth(row(BenchOp.ALL_REDUCE, 1024, timing(12.5, 3.5, 0), timing(11.75, 4.5, 0)));
        List<String> lines = lines();
        String groups = lines.get(1);
        String names = lines.get(2);
        String data = lines.get(4);
        assertEquals(List.of("#", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong"), tokens(names));
        assertEquals(List.of("1024", "256", "float32", "sum", "-1", "12.50", "1.75", "3.50", "0", "11.75", "2.25", "4.50", "0"), tokens(data));
        // Every column is right-aligned under its name (the "#" of the heading line has no column).
        assertEquals(tokenEnds(names).subList(1, 14), tokenEnds(data));
        List<Integer> ends = tokenEnds(names);
        int outOfPlaceStart = names.indexOf("time");
        int outOfPlaceEnd = ends.get(9);
        int inPlaceStart = names.indexOf("time", outOfPlaceEnd);
        int inPlaceEnd = ends.get(13);
        assertCentredWithin(groups, "out-of-place", outOfPlaceStart, outOfPlaceEnd);
        assertCentredWithin(groups, "in-place", inPlaceStart, inPlaceEnd);
    }

    private static void assertCentredWithin(String line, String heading, int from, int to) {
        int at = line.indexOf(heading);
        assertTrue(at >= from && at + heading.length() <= to, heading + " lies over its columns " + from + ".." + to + ":\n" + line);
        int middle = at + heading.length() / 2;
        assertTrue(Math.abs(middle - (from + to) / 2) <= 3, heading + " is centred over its columns:\n" + line);
    }

    @Test
    void aFormNotMeasuredShowsDashesInItsColumns() {
        Report r = report(false);
        r.bandwidth(row(BenchOp.BROADCAST, 64, null, timing(3, 1, -1)));
        List<String> data = tokens(lines().get(4));
        assertEquals(List.of("64", "16", "float32", "none", "0", "-", "-", "-", "-", "3.00", "0.50", "1.00", "N/A"), data);
    }

    @Test
    void severalOperationsNameTheOperationOnEveryRowAndOneDoesNot() {
        Report named = report(true);
        named.bandwidth(row(BenchOp.ALL_REDUCE, 64, timing(1, 1, 0), timing(1, 1, 0)));
        named.bandwidth(row(BenchOp.REDUCE_SCATTER, 64, timing(1, 1, 0), timing(1, 1, 0)));
        List<String> lines = lines();
        assertEquals("operation", tokens(lines.get(2)).get(1));
        assertEquals("allreduce", tokens(lines.get(4)).get(0));
        assertEquals("reducescatter", tokens(lines.get(5)).get(0));
        assertEquals(tokenEnds(lines.get(2)).subList(2, 15), tokenEnds(lines.get(5)).subList(1, 14), "columns still line up");

        bytes.reset();
        Report single = report(false);
        single.bandwidth(row(BenchOp.ALL_REDUCE, 64, timing(1, 1, 0), timing(1, 1, 0)));
        assertEquals("64", tokens(lines().get(4)).get(0));
        assertTrue(lines().stream().noneMatch(l -> l.contains("operation")));
    }

    @Test
    void theFooterAveragesBusBandwidthOverEveryMeasuredForm() {
        Report r = report(true);
        r.bandwidth(row(BenchOp.ALL_REDUCE, 64, timing(1, 10, 0), timing(1, 20, 0)));
        r.bandwidth(row(BenchOp.ALL_GATHER, 64, timing(1, 30, 0), null));
        r.bandwidthFooter();
        List<String> lines = lines();
        int n = lines.size();
        assertEquals("# Out of bounds values : 0 OK", lines.get(n - 4));
        assertEquals("# Avg bus bandwidth    : 15.000 (allreduce)", lines.get(n - 3));
        assertEquals("# Avg bus bandwidth    : 30.000 (allgather)", lines.get(n - 2));
        assertEquals("# Avg bus bandwidth    : 20.000", lines.get(n - 1));
    }

    @Test
    void theFooterCountsWrongValuesOrSaysNoneWereChecked() {
        Report r = report(false);
        r.bandwidth(row(BenchOp.ALL_REDUCE, 64, timing(1, 2, 3), timing(1, 4, -1)));
        r.bandwidthFooter();
        List<String> lines = lines();
        assertEquals("# Out of bounds values : 3 FAILED", lines.get(lines.size() - 2));
        assertEquals("# Avg bus bandwidth    : 3.000", lines.get(lines.size() - 1), "one operation: the total alone");

        bytes.reset();
        Report unchecked = report(false);
        unchecked.bandwidth(row(BenchOp.ALL_REDUCE, 64, timing(1, 2, -1), null));
        unchecked.bandwidthFooter();
        assertTrue(lines().contains("# Out of bounds values : N/A (not checked)"), String.join("\n", lines()));
    }
}
