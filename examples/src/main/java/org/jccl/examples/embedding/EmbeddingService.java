package org.jccl.examples.embedding;

import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.metrics.JcclMetrics;
import org.jccl.core.rendezvous.Rendezvous;
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
 * </pre>
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
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 8080;
        int maxInFlight = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
        Duration timeout = Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 5000);
        Backend backend = Jccl.backend();
        Scheduler stepThread = Schedulers.newSingle("embedding-steps");
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("embedding-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, rdzv.worldSize(), rdzv.rank(), device).get(60, TimeUnit.SECONDS);
            try (LookupSteps steps = new LookupSteps(backend, ReactiveCommunicator.of(comm), stepThread)) {
                if (rdzv.rank() == 0) {
                    new EmbeddingService(rdzv, steps, maxInFlight, timeout).serve(port, comm);
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
    private void serve(int port, Communicator comm) {
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
            lead.block();
            progress.dispose();
            server.disposeNow(Duration.ofSeconds(10));
            System.out.println("embedding service: stopped after " + served + " requests"
                    + (failed ? " (communicator failed)" : ""));
        }
    }

    private void shutdown() {
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
