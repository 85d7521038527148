package org.jccl.examples.bench;

import java.io.PrintStream;
import java.util.Locale;

/**
 * One JSON object per result on stdout, nothing else (no header, no footer), so each line parses on its own.
 * A bandwidth row carries its two forms as {@code "out_of_place"} and {@code "in_place"} objects (null when not
 * measured); raw_nccl_bench.c writes the same fields, and {@link CompareFile} reads both.
 */
final class JsonReport implements Report {
    private final PrintStream out;

    JsonReport(PrintStream out) {
        this.out = out;
    }

    @Override
    public void header(String title, String mode) {
    }

    @Override
    public void bandwidth(BandwidthRow row) {
        out.printf(Locale.ROOT, "{\"mode\":\"bandwidth\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"count\":%d,\"type\":\"%s\","
                        + "\"redop\":\"%s\",\"root\":%d,\"out_of_place\":%s,\"in_place\":%s}%n",
                row.op().id, row.path(), row.bytes(), row.count(), row.type(), row.redop(), row.root(), form(row.outOfPlace()),
                form(row.inPlace()));
    }

    @Override
    public void bandwidthFooter() {
    }

    @Override
    public void latency(BenchOp op, String path, long bytes, int samples, double p50, double p99, double p999, double mean,
                        double eventCpuNanosPerOp) {
        out.printf(Locale.ROOT, "{\"mode\":\"latency\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"samples\":%d,\"p50_us\":%.2f,"
                + "\"p99_us\":%.2f,\"p999_us\":%.2f,\"mean_us\":%.2f,\"event_cpu_ns_per_op\":%.1f}%n",
                op.id, path, bytes, samples, p50, p99, p999, mean, eventCpuNanosPerOp);
    }

    @Override
    public void pipeline(BenchOp op, String path, long bytes, int inFlight, long ops, double seconds, double eventCpuNanosPerOp) {
        out.printf(Locale.ROOT, "{\"mode\":\"pipeline\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"inflight\":%d,\"ops\":%d,"
                + "\"ops_per_s\":%.0f,\"event_cpu_ns_per_op\":%.1f}%n", op.id, path, bytes, inFlight, ops, ops / seconds, eventCpuNanosPerOp);
    }

    @Override
    public void idle(double seconds, double cpuMicros, String threadState, double jcclCpuMicros, int jcclThreads) {
        out.printf(Locale.ROOT, "{\"mode\":\"idle\",\"seconds\":%.3f,\"event_cpu_us\":%.1f,\"state\":\"%s\",\"jccl_threads\":%d,"
                + "\"jccl_cpu_us\":%.1f}%n", seconds, cpuMicros, threadState, jcclThreads, jcclCpuMicros);
    }

    private static String form(Timing t) {
        if (t == null) return "null";
        return String.format(Locale.ROOT, "{\"time_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f,\"wrong\":%s,\"event_cpu_ns_per_op\":%.1f}",
                t.micros(), t.algbw(), t.busbw(), t.checked() ? Long.toString(t.wrong()) : "null", t.eventCpuNanosPerOp());
    }
}
