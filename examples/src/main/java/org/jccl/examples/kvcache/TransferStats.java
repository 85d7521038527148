package org.jccl.examples.kvcache;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** One rank's transfers: per-request times and bytes, summed up into the summary line. Thread-safe. */
final class TransferStats {
    private final List<long[]> transfers = new ArrayList<>(); // bytes, transfer ns, waited ns
    private long wrongBytes;
    private int failed;
    private long startNanos;
    private long endNanos;

    /** The aggregate's clock starts at the first call: the first request sent, or granted. */
    synchronized void started() {
        if (startNanos == 0) startNanos = System.nanoTime();
    }

    synchronized void add(long bytes, long transferNanos, long waitedNanos) {
        transfers.add(new long[] {bytes, transferNanos, waitedNanos});
        endNanos = System.nanoTime();
    }

    synchronized void addWrong(long bytes) {
        wrongBytes += bytes;
    }

    synchronized void fail() {
        failed++;
    }

    synchronized int failed() {
        return failed;
    }

    synchronized long wrongBytes() {
        return wrongBytes;
    }

    synchronized String prefillSummary(int rank, PipelineOptions options) {
        long waited = 0;
        long maxWaited = 0;
        for (long[] t : transfers) {
            waited += t[2];
            maxWaited = Math.max(maxWaited, t[2]);
        }
        return String.format(Locale.ROOT, "prefill rank %d summary: %d of %d transfers delivered, %s; transfer %s;"
                + " %s; waited for decode blocks %.1f ms in all, %.1f ms at most", rank, transfers.size(),
                options.requests() * options.decodes(), size(bytes()), times(), aggregate(), waited / 1e6, maxWaited / 1e6);
    }

    synchronized String decodeSummary(int rank, int expected) {
        return String.format(Locale.ROOT, "decode rank %d summary: %d of %d requests received, %s checked, %d wrong bytes,"
                + " %d failed; usable after grant %s; %s", rank, transfers.size(), expected, size(bytes()), wrongBytes,
                failed, times(), aggregate());
    }

    private long bytes() {
        long b = 0;
        for (long[] t : transfers) b += t[0];
        return b;
    }

    /** p50 and max of the transfer times, and the median request's rate. */
    private String times() {
        if (transfers.isEmpty()) return "none";
        List<long[]> sorted = new ArrayList<>(transfers);
        sorted.sort((a, b) -> Long.compare(a[1], b[1]));
        long[] median = sorted.get(sorted.size() / 2);
        long[] max = sorted.get(sorted.size() - 1);
        return String.format(Locale.ROOT, "p50 %.3f ms (%s), max %.3f ms", median[1] / 1e6,
                rate(median[1] == 0 ? 0 : median[0] * 1e9 / median[1]), max[1] / 1e6);
    }

    /** Every byte over the time from the start to the last transfer's end: what the pipeline sustained. */
    private String aggregate() {
        double seconds = (endNanos - startNanos) / 1e9;
        return String.format(Locale.ROOT, "%s over %.3f s", rate(seconds <= 0 ? 0 : bytes() / seconds), seconds);
    }

    /** A rate for people: GB/s, or MB/s below 1 GB/s (the host backend's small shapes). */
    static String rate(double bytesPerSecond) {
        return bytesPerSecond >= 1e9 ? String.format(Locale.ROOT, "%.2f GB/s", bytesPerSecond / 1e9)
                : String.format(Locale.ROOT, "%.2f MB/s", bytesPerSecond / 1e6);
    }

    /** Bytes for people: KiB, MiB or GiB. */
    static String size(long bytes) {
        if (bytes >= 1L << 30) return String.format(Locale.ROOT, "%.2f GiB", bytes / (double) (1L << 30));
        if (bytes >= 1L << 20) return String.format(Locale.ROOT, "%.2f MiB", bytes / (double) (1L << 20));
        return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
}
