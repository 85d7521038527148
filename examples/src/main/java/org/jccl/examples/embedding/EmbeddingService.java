package org.jccl.examples.embedding;

import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.metrics.JcclMetrics;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.examples.bench.LatencyPlot;
import org.jccl.examples.bench.LoadGenerator;
import org.jccl.reactive.ReactiveCommunicator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A reactive microservice: a sharded embedding lookup over HTTP. Every rank holds one shard of an
 * {@link EmbeddingTable}; rank 0 serves HTTP on loopback and turns each request into one ordered step of collectives
 * over all ranks ({@link LookupSteps}).
 *
 * <pre>
 *   launcher --nproc N -- org.jccl.examples.embedding.EmbeddingService [port (0: any)] [max requests in flight] [timeout ms]
 *       [--load 1,4,16,64,256 [--load-requests N] [--load-seconds S] [--plot FILE.svg]]
 * </pre>
 *
 * With {@code --load}, rank 0 drives itself with the {@link LoadGenerator} over loopback (each level bounded by
 * {@code --load-requests}, default 20000, and {@code --load-seconds}, default 5; every answer checked), prints the
 * table, draws the plot, and shuts the service down.
 *
 * Endpoints: {@code GET /embed?ids=3,17,42[&timeoutMs=T][&computeMs=C]} answers
 * {@code {"ids":[...],"rows":[[...],...]}} (C simulates per-step compute on every rank); {@code GET /health};
 * {@code GET /metrics} (Prometheus text: jccl's operation meters and the service's own); {@code POST /shutdown}
 * finishes the requests already accepted, stops every rank and exits. Status codes: 400 bad ids, 429 too many
 * requests in flight, 503 the service is stopping or its communicator failed, 504 the request's timeout passed. A client
 * that disconnects abandons its request: skipped if its step has not begun, otherwise the step runs to its end on
 * every rank and the answer is dropped.
 */
public final class EmbeddingService {
    private final Rendezvous rendezvous;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final LookupSteps steps;
    private final Duration defaultTimeout;
    private final int maxInFlight;
    /** Requests accepted and not yet answered. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Sinks.Empty<float[][]> down = Sinks.empty();
    private volatile boolean stopping;
    private volatile boolean failed;
    private volatile long served;
    private FluxSink<LookupRequest> requests;

    private EmbeddingService(Rendezvous rendezvous, LookupSteps steps, int maxInFlight, Duration defaultTimeout) {
        this.rendezvous = rendezvous;
        this.steps = steps;
        this.maxInFlight = maxInFlight;
        this.defaultTimeout = defaultTimeout;
    }

    public static void main(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--") && i + 1 < args.length) flags.put(args[i], args[++i]);
            else positional.add(args[i]);
        }
        int port = positional.size() > 0 ? Integer.parseInt(positional.get(0)) : 8080;
        int maxInFlight = positional.size() > 1 ? Integer.parseInt(positional.get(1)) : 1024;
        Duration timeout = Duration.ofMillis(positional.size() > 2 ? Long.parseLong(positional.get(2)) : 5000);
        Backend backend = Jccl.backend();
        Scheduler stepThread = Schedulers.newSingle("embedding-steps");
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("embedding-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, rdzv.worldSize(), rdzv.rank(), device).get(60, TimeUnit.SECONDS);
            try (LookupSteps steps = new LookupSteps(backend, ReactiveCommunicator.of(comm), stepThread)) {
                if (rdzv.rank() == 0) {
                    new EmbeddingService(rdzv, steps, maxInFlight, timeout).serve(port, comm, flags);
                } else {
                    steps.follow().block();
                }
                System.out.println("rank " + rdzv.rank() + ": " + steps.completed() + " steps, order hash "
                        + Long.toHexString(steps.orderHash()));
            } finally {
                comm.close();
                stepThread.dispose();
            }
        }
    }

    /** Rank 0: serves until {@code POST /shutdown}, then stops the other ranks. */
    private void serve(int port, Communicator comm, Map<String, String> flags) {
        Flux<LookupRequest> stream = Flux.create(sink -> requests = sink); // FluxSink is safe from many threads
        Mono<Void> lead = steps.lead(stream)
                .doOnError(e -> {
                    failed = true;
                    down.tryEmitError(new IllegalStateException("the service's communicator failed: " + e.getMessage(), e));
                })
                .onErrorResume(e -> Mono.empty())
                .cache();
        lead.subscribe();
        try (JcclMetrics metrics = new JcclMetrics()) {
            metrics.bindTo(registry);
            DisposableServer server = HttpServer.create().host("127.0.0.1").port(port)
                    .route(routes -> routes
                            .get("/embed", this::embed)
                            .get("/health", (req, res) -> text(res, failed || stopping ? 503 : 200,
                                    failed ? "DOWN" : stopping ? "STOPPING" : "UP"))
                            .get("/metrics", (req, res) -> res.header("Content-Type", "text/plain; version=0.0.4")
                                    .sendString(Mono.fromCallable(registry::scrape)).then())
                            .post("/shutdown", (req, res) -> {
                                shutdown();
                                return text(res, 202, "stopping");
                            }))
                    .bindNow(Duration.ofSeconds(30));
            System.out.println("embedding service: " + comm.size() + " shards of " + EmbeddingTable.ROWS + " x "
                    + EmbeddingTable.DIM + " floats, listening on http://127.0.0.1:" + server.port());
            Disposable progress = Flux.interval(Duration.ofSeconds(2)).map(t -> served).distinctUntilChanged()
                    .buffer(2, 1).filter(p -> p.size() == 2)
                    .subscribe(p -> System.out.printf("embedding service: %d requests served, %.0f/s, %d in flight%n",
                            p.get(1), (p.get(1) - p.get(0)) / 2.0, inFlight.get()));
            if (flags.containsKey("--load")) selfLoad(URI.create("http://127.0.0.1:" + server.port()), comm, flags);
            lead.block();
            progress.dispose();
            server.disposeNow(Duration.ofSeconds(10));
            System.out.println("embedding service: stopped after " + served + " requests"
                    + (failed ? " (communicator failed)" : ""));
        }
    }

    /** {@code --load}: the load generator against this service, on its own thread, then the shutdown. */
    private void selfLoad(URI base, Communicator comm, Map<String, String> flags) {
        Thread load = new Thread(() -> {
            try {
                LoadGenerator generator = new LoadGenerator(base, new LoadGenerator.Workload() {
                    @Override
                    public String path(long index) {
                        return "/embed?ids=" + Arrays.stream(randomIds(index)).mapToObj(Integer::toString)
                                .collect(Collectors.joining(","));
                    }

                    @Override
                    public boolean check(long index, String body) {
                        int[] ids = randomIds(index);
                        float[][] rows = new float[ids.length][EmbeddingTable.DIM];
                        for (int i = 0; i < ids.length; i++) {
                            for (int j = 0; j < EmbeddingTable.DIM; j++) rows[i][j] = EmbeddingTable.value(ids[i], j);
                        }
                        return body.equals(json(ids, rows));
                    }
                });
                List<LoadGenerator.Row> rows = generator.run(LoadGenerator.levels(flags.get("--load")),
                        Long.parseLong(flags.getOrDefault("--load-requests", "20000")),
                        Duration.ofSeconds(Long.parseLong(flags.getOrDefault("--load-seconds", "5"))));
                String plot = flags.get("--plot");
                if (plot != null) {
                    LatencyPlot.write(Path.of(plot), "embedding lookups, " + comm.size() + " shards, "
                            + comm.backend().kind().id() + " backend", rows);
                    System.out.println("embedding service: plot written to " + plot);
                }
            } catch (Exception e) {
                System.out.println("embedding service: load failed: " + e);
            } finally {
                shutdown();
            }
        }, "embedding-load");
        load.start();
    }

    /** Request {@code index}'s ids under {@code --load}: 1 to 16 ids, the same for the request and its check. */
    private static int[] randomIds(long index) {
        Random random = new Random(index);
        return random.ints(1 + random.nextInt(16), 0, EmbeddingTable.ROWS).toArray();
    }

    private synchronized void shutdown() {
        if (stopping) return;
        stopping = true;
        requests.complete();
    }

    private Mono<Void> embed(HttpServerRequest req, HttpServerResponse res) {
        long start = System.nanoTime();
        LookupRequest request;
        Duration timeout;
        try {
            QueryStringDecoder query = new QueryStringDecoder(req.uri());
            request = new LookupRequest(parseIds(param(query, "ids", null)), (int) parseMillis(param(query, "computeMs", "0"), "computeMs"));
            String t = param(query, "timeoutMs", "");
            timeout = t.isEmpty() ? defaultTimeout : Duration.ofMillis(parseMillis(t, "timeoutMs"));
        } catch (IllegalArgumentException e) {
            return answer(res, start, "bad_request", 400, e.getMessage());
        }
        if (failed || stopping) return answer(res, start, "unavailable", 503, failed ? "the service is down" : "the service is stopping");
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            return answer(res, start, "busy", 429, "more than " + maxInFlight + " requests in flight");
        }
        requests.next(request);
        return request.answer().or(down.asMono()).timeout(timeout)
                .flatMap(rows -> {
                    served++;
                    return answer(res, start, "ok", 200, json(request.ids, rows));
                })
                .onErrorResume(TimeoutException.class, e -> {
                    request.abandon();
                    return answer(res, start, "timeout", 504, "no answer within " + timeout.toMillis() + " ms");
                })
                .onErrorResume(e -> answer(res, start, "unavailable", 503, String.valueOf(e.getMessage())))
                .doFinally(signal -> {
                    inFlight.decrementAndGet();
                    if (signal == SignalType.CANCEL) { // the client went away
                        request.abandon();
                        record(start, "cancelled");
                    }
                });
    }

    private Mono<Void> answer(HttpServerResponse res, long start, String outcome, int status, String body) {
        record(start, outcome);
        return status == 200 ? res.status(200).header("Content-Type", "application/json").sendString(Mono.just(body)).then()
                : text(res, status, body);
    }

    private static Mono<Void> text(HttpServerResponse res, int status, String body) {
        return res.status(HttpResponseStatus.valueOf(status)).header("Content-Type", "text/plain")
                .sendString(Mono.just(body + "\n")).then();
    }

    private void record(long start, String outcome) {
        Timer.builder("embedding.requests").description("HTTP lookups by outcome").tag("outcome", outcome)
                .register(registry).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }

    private static String param(QueryStringDecoder query, String name, @Nullable String fallback) {
        List<String> values = query.parameters().get(name);
        if (values != null && !values.isEmpty()) return values.get(0);
        if (fallback == null) throw new IllegalArgumentException("missing parameter " + name);
        return fallback;
    }

    static int[] parseIds(String text) {
        String[] parts = text.split(",");
        if (parts.length > LookupSteps.MAX_IDS) {
            throw new IllegalArgumentException("at most " + LookupSteps.MAX_IDS + " ids, not " + parts.length);
        }
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an id: " + parts[i]);
            }
            if (ids[i] < 0 || ids[i] >= EmbeddingTable.ROWS) {
                throw new IllegalArgumentException("id " + ids[i] + " outside 0.." + (EmbeddingTable.ROWS - 1));
            }
        }
        return ids;
    }

    private static long parseMillis(String text, String name) {
        try {
            long v = Long.parseLong(text);
            if (v < 0 || v > 60_000) throw new IllegalArgumentException(name + " must be within 0..60000, not " + v);
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " is not a number: " + text);
        }
    }

    static String json(int[] ids, float[][] rows) {
        StringBuilder sb = new StringBuilder("{\"ids\":[");
        for (int i = 0; i < ids.length; i++) sb.append(i > 0 ? "," : "").append(ids[i]);
        sb.append("],\"rows\":[");
        for (int i = 0; i < rows.length; i++) {
            sb.append(i > 0 ? ",[" : "[");
            for (int j = 0; j < rows[i].length; j++) sb.append(j > 0 ? "," : "").append(rows[i][j]);
            sb.append(']');
        }
        return sb.append("]}").toString();
    }
}
