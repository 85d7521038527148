package org.jccl.examples.bench;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * nccl-tests' table: the row's description, then out-of-place and in-place time, algbw, busbw and #wrong side by
 * side under centred group headings, a leading operation column when several operations are measured, and the
 * "# Out of bounds values" and "# Avg bus bandwidth" footer (the mean busbw over every measured form of every row,
 * and per operation when there are several). raw_nccl_bench.c prints the same layout, so the two line up.
 */
final class TextReport implements Report {
    /** Width of one form's four columns: " %10s %8s %8s %7s" less the leading space. */
    private static final int FORM_WIDTH = 36;
    /** Width of the row description: "%12s %12s %9s %7s %5s". */
    private static final int DESCRIPTION_WIDTH = 49;
    private static final String OPERATION_HEADING = String.format("%-13s ", "operation");

    private final PrintStream out;
    private final boolean nameOperations;
    private final Map<BenchOp, double[]> busbwSums = new LinkedHashMap<>(); // per operation: {sum, count}
    private long wrong;
    private boolean anyChecked;

    TextReport(PrintStream out, boolean nameOperations) {
        this.out = out;
        this.nameOperations = nameOperations;
    }

    @Override
    public void header(String title, String mode) {
        out.println("# " + title);
        if (!mode.equals("bandwidth")) return;
        String blank = nameOperations ? " ".repeat(OPERATION_HEADING.length()) : "";
        out.println("# " + blank + " ".repeat(DESCRIPTION_WIDTH) + "  " + centred("out-of-place") + "  " + centred("in-place").stripTrailing());
        out.println("# " + (nameOperations ? OPERATION_HEADING : "") + description("size", "count", "type", "redop", "root")
                + formHeadings("time", "algbw", "busbw", "#wrong") + formHeadings("time", "algbw", "busbw", "#wrong"));
        out.println(("# " + blank + description("(B)", "(elements)", "", "", "")
                + formHeadings("(us)", "(GB/s)", "(GB/s)", "") + formHeadings("(us)", "(GB/s)", "(GB/s)", "")).stripTrailing());
    }

    @Override
    public void bandwidth(BandwidthRow row) {
        StringBuilder line = new StringBuilder("  ");
        if (nameOperations) line.append(String.format(Locale.ROOT, "%-13s ", row.op().id));
        line.append(String.format(Locale.ROOT, "%12d %12d %9s %7s %5d", row.bytes(), row.count(), row.type(), row.redop(), row.root()));
        line.append(cells(row.outOfPlace())).append(cells(row.inPlace()));
        out.println(line);
        for (Timing t : row.measured()) {
            double[] sum = busbwSums.computeIfAbsent(row.op(), op -> new double[2]);
            sum[0] += t.busbw();
            sum[1]++;
            if (t.checked()) {
                anyChecked = true;
                wrong += t.wrong();
            }
        }
    }

    @Override
    public void bandwidthFooter() {
        out.println("# Out of bounds values : " + (anyChecked ? wrong + (wrong == 0 ? " OK" : " FAILED") : "N/A (not checked)"));
        double total = 0;
        double count = 0;
        for (Map.Entry<BenchOp, double[]> e : busbwSums.entrySet()) {
            double[] sum = e.getValue();
            if (nameOperations) out.printf(Locale.ROOT, "# Avg bus bandwidth    : %.3f (%s)%n", sum[0] / sum[1], e.getKey().id);
            total += sum[0];
            count += sum[1];
        }
        out.printf(Locale.ROOT, "# Avg bus bandwidth    : %.3f%n", count == 0 ? 0 : total / count);
    }

    @Override
    public void latency(BenchOp op, String path, long bytes, int samples, double p50, double p99, double p999, double mean,
                        double eventCpuNanosPerOp) {
        out.printf(Locale.ROOT, "  %s %d B via %s: round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us, mean %.2f us (%d samples);"
                + " event thread %.0f ns CPU per op%n", op.id, bytes, path, p50, p99, p999, mean, samples, eventCpuNanosPerOp);
    }

    @Override
    public void pipeline(BenchOp op, String path, long bytes, int inFlight, long ops, double seconds, double eventCpuNanosPerOp) {
        out.printf(Locale.ROOT, "  %s %d B via %s, %d in flight: %.0f ops/s (%d ops per rank in %.3f s); event thread %.0f ns CPU per op%n",
                op.id, bytes, path, inFlight, ops / seconds, ops, seconds, eventCpuNanosPerOp);
    }

    @Override
    public void idle(double seconds, double cpuMicros, String threadState, double jcclCpuMicros, int jcclThreads) {
        out.printf(Locale.ROOT, "  idle: event thread used %.1f us of CPU in %.2f s with nothing pending (state %s); all %d jccl "
                + "threads %.1f us%n", cpuMicros, seconds, threadState, jcclThreads, jcclCpuMicros);
    }

    private static String description(String size, String count, String type, String redop, String root) {
        return String.format("%12s %12s %9s %7s %5s", size, count, type, redop, root);
    }

    private static String formHeadings(String time, String algbw, String busbw, String wrong) {
        return String.format("  %10s %8s %8s %7s", time, algbw, busbw, wrong);
    }

    /** One form's cells; dashes for a form that was not measured. */
    private static String cells(Timing t) {
        if (t == null) return formHeadings("-", "-", "-", "-");
        return String.format(Locale.ROOT, "  %10.2f %8.2f %8.2f %7s", t.micros(), t.algbw(), t.busbw(), t.checked() ? Long.toString(t.wrong()) : "N/A");
    }

    private static String centred(String heading) {
        int left = (FORM_WIDTH - heading.length()) / 2;
        return " ".repeat(left) + heading + " ".repeat(FORM_WIDTH - heading.length() - left);
    }
}
