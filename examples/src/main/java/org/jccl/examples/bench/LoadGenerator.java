package org.jccl.examples.bench;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Closed-loop load on a service on this machine: for each level, that many clients each send a request, wait for the
 * answer, check it and send the next, until the level's request count or time is used up. Every answer is checked;
 * latency is measured per request from send to the whole body received.
 */
public final class LoadGenerator {
    /** Makes request {@code index}'s path and checks its answer. */
    public interface Workload {
        /** The path and query of request {@code index}, e.g. {@code /embed?ids=3,4}. */
        String path(long index);

        /** Whether {@code body}, answered with status 200 to request {@code index}, is right. */
        boolean check(long index, String body);
    }

    /** One level's figures; latencies in microseconds. */
    public record Row(int clients, long requests, long failed, long wrong, double seconds, double perSecond,
                      double p50, double p99, double p999) {
    }

    private final URI base;
    private final Workload workload;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    /** Load on {@code base} ({@code http://127.0.0.1:PORT}); refuses any host that is not this machine's loopback. */
    public LoadGenerator(URI base, Workload workload) {
        try {
            if (!InetAddress.getByName(base.getHost()).isLoopbackAddress()) {
                throw new IllegalArgumentException("the load generator only targets loopback, not " + base);
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host in " + base, e);
        }
        this.base = base;
        this.workload = workload;
    }

    /** Runs every level in turn, printing each row as it completes. */
    public List<Row> run(int[] levels, long maxRequests, Duration maxTime) {
        List<Row> rows = new ArrayList<>();
        System.out.println(header());
        for (int clients : levels) {
            Row row = level(clients, maxRequests, maxTime);
            rows.add(row);
            System.out.println(format(row));
        }
        return rows;
    }

    /** One level: {@code clients} loops sharing a budget of {@code maxRequests} and {@code maxTime}. */
    Row level(int clients, long maxRequests, Duration maxTime) {
        long[] latencies = new long[(int) Math.min(maxRequests, Integer.MAX_VALUE - 8)];
        AtomicLong issued = new AtomicLong();
        AtomicInteger recorded = new AtomicInteger();
        AtomicLong failed = new AtomicLong();
        AtomicLong wrong = new AtomicLong();
        long start = System.nanoTime();
        long deadline = start + maxTime.toNanos();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            loops.add(loop(issued, latencies.length, deadline, latencies, recorded, failed, wrong));
        }
        CompletableFuture.allOf(loops.toArray(new CompletableFuture[0]))
                .orTimeout(maxTime.toMillis() + 60_000, TimeUnit.MILLISECONDS).join();
        double seconds = (System.nanoTime() - start) / 1e9;
        int n = recorded.get();
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        return new Row(clients, n + failed.get(), failed.get(), wrong.get(), seconds, n / seconds,
                percentile(sorted, 0.50), percentile(sorted, 0.99), percentile(sorted, 0.999));
    }

    private CompletableFuture<Void> loop(AtomicLong issued, long max, long deadline, long[] latencies,
                                         AtomicInteger recorded, AtomicLong failed, AtomicLong wrong) {
        long index = issued.getAndIncrement();
        if (index >= max || System.nanoTime() >= deadline) return CompletableFuture.completedFuture(null);
        HttpRequest request = HttpRequest.newBuilder(base.resolve(workload.path(index))).timeout(Duration.ofSeconds(30)).build();
        long sent = System.nanoTime();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).handle((response, error) -> {
            long took = System.nanoTime() - sent;
            if (error != null || response.statusCode() != 200) {
                failed.incrementAndGet();
            } else {
                if (!workload.check(index, response.body())) wrong.incrementAndGet();
                latencies[recorded.getAndIncrement()] = took;
            }
            return null;
        }).thenCompose(v -> loop(issued, max, deadline, latencies, recorded, failed, wrong));
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) return Double.NaN;
        int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1e3;
    }

    /** The table's header line. */
    public static String header() {
        return String.format(Locale.ROOT, "%8s %9s %7s %6s %10s %10s %10s %10s", "clients", "requests", "failed", "wrong",
                "req/s", "p50 ms", "p99 ms", "p99.9 ms");
    }

    /** One table line. */
    public static String format(Row r) {
        return String.format(Locale.ROOT, "%8d %9d %7d %6d %10.0f %10.2f %10.2f %10.2f", r.clients(), r.requests(),
                r.failed(), r.wrong(), r.perSecond(), r.p50() / 1e3, r.p99() / 1e3, r.p999() / 1e3);
    }

    /** Levels from text like {@code 1,2,4,8}. */
    public static int[] levels(String text) {
        return Arrays.stream(text.split(",")).mapToInt(s -> Integer.parseInt(s.trim())).toArray();
    }
}
