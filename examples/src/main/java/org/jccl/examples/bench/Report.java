package org.jccl.examples.bench;

import java.io.PrintStream;
import java.util.Locale;

/** Prints results as nccl-tests' table (or one JSON object per line with {@code --json}); progress goes to stderr. */
final class Report {
    private final PrintStream out;
    private final boolean json;

    Report(PrintStream out, boolean json) {
        this.out = out;
        this.json = json;
    }

    void header(String title, String mode) {
        if (json) return;
        out.println("# " + title);
        if (mode.equals("bandwidth")) {
            out.printf("# %12s %12s %9s %7s %5s %10s %8s %8s %7s%n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
            out.printf("# %12s %12s %9s %7s %5s %10s %8s %8s %7s%n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
        }
    }

    void bandwidth(BenchOp op, String path, long bytes, long count, String type, String redop, int root, double micros,
                   double algbw, double busbw, long wrong, double eventCpuNanosPerOp) {
        String wrongText = wrong < 0 ? "N/A" : Long.toString(wrong);
        if (json) {
            out.printf(Locale.ROOT, "{\"mode\":\"bandwidth\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"count\":%d,\"type\":\"%s\","
                            + "\"redop\":\"%s\",\"root\":%d,\"time_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f,\"wrong\":%s,"
                            + "\"event_cpu_ns_per_op\":%.1f}%n",
                    op.id, path, bytes, count, type, redop, root, micros, algbw, busbw, wrong < 0 ? "null" : wrongText, eventCpuNanosPerOp);
        } else {
            out.printf(Locale.ROOT, "  %12d %12d %9s %7s %5d %10.2f %8.2f %8.2f %7s%n", bytes, count, type, redop, root, micros, algbw,
                    busbw, wrongText);
        }
    }

    void latency(BenchOp op, String path, long bytes, int samples, double p50, double p99, double p999, double mean,
                 double eventCpuNanosPerOp) {
        if (json) {
            out.printf(Locale.ROOT, "{\"mode\":\"latency\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"samples\":%d,\"p50_us\":%.2f,"
                    + "\"p99_us\":%.2f,\"p999_us\":%.2f,\"mean_us\":%.2f,\"event_cpu_ns_per_op\":%.1f}%n",
                    op.id, path, bytes, samples, p50, p99, p999, mean, eventCpuNanosPerOp);
        } else {
            out.printf(Locale.ROOT, "  %s %d B via %s: round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us, mean %.2f us (%d samples);"
                    + " event thread %.0f ns CPU per op%n", op.id, bytes, path, p50, p99, p999, mean, samples, eventCpuNanosPerOp);
        }
    }

    void pipeline(BenchOp op, String path, long bytes, int inFlight, long ops, double seconds, double eventCpuNanosPerOp) {
        double rate = ops / seconds;
        if (json) {
            out.printf(Locale.ROOT, "{\"mode\":\"pipeline\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,\"inflight\":%d,\"ops\":%d,"
                    + "\"ops_per_s\":%.0f,\"event_cpu_ns_per_op\":%.1f}%n", op.id, path, bytes, inFlight, ops, rate, eventCpuNanosPerOp);
        } else {
            out.printf(Locale.ROOT, "  %s %d B via %s, %d in flight: %.0f ops/s (%d ops per rank in %.3f s); event thread %.0f ns CPU per op%n",
                    op.id, bytes, path, inFlight, rate, ops, seconds, eventCpuNanosPerOp);
        }
    }

    void idle(double seconds, double cpuMicros, String threadState) {
        if (json) {
            out.printf(Locale.ROOT, "{\"mode\":\"idle\",\"seconds\":%.3f,\"event_cpu_us\":%.1f,\"state\":\"%s\"}%n", seconds, cpuMicros, threadState);
        } else {
            out.printf(Locale.ROOT, "  idle: event thread used %.1f us of CPU in %.2f s with nothing pending (state %s)%n", cpuMicros, seconds, threadState);
        }
    }
}
