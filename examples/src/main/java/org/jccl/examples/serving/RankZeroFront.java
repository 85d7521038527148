package org.jccl.examples.serving;

import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationTextPublisher;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jccl.core.Communicator;
import org.jccl.core.metrics.JcclMetrics;
import org.jccl.core.observation.JcclObservations;
import org.jccl.examples.bench.LatencyPlot;
import org.jccl.examples.bench.LoadGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * Rank 0's HTTP front of a service whose requests become ordered steps over all ranks. It turns the requests of every
 * HTTP thread into one stream (a {@code Flux.create} sink, safe from many threads) that the service's step loop
 * consumes in order; bounds the requests in flight; answers each with its step's result or a status code (429 too many
 * in flight, 503 stopping or the communicator failed, 504 the request's timeout passed; 405 for a known path asked
 * with another method, see {@link ServiceRoutes}), abandoning requests whose
 * client went away or timed out; and serves {@code GET /health}, {@code GET /metrics} (Prometheus text: jccl's
 * operation meters and the service's {@code <name>_requests_seconds{outcome=...}}) and {@code POST /shutdown}
 * (finish the accepted requests, then end the stream so the step loop stops every rank). Each submitted request is a
 * Micrometer observation ({@code jccl.http.request}) whose children are its step's jccl operations; {@code --trace
 * stdout} prints them (Micrometer's text publisher), and an application passes its own registry (with a tracer) to the
 * constructor. Without either, nothing is observed.
 *
 * @param <R> the service's request
 */
public final class RankZeroFront<R extends PendingRequest<?>> {
    private final String name;
    private final ServiceOptions options;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong served = new AtomicLong();
    private final Sinks.Empty<Object> down = Sinks.empty();
    private volatile boolean stopping;
    private volatile boolean failed;
    private @Nullable FluxSink<R> requests;
    private final @Nullable ObservationRegistry observations;

    /** A front named {@code name} (the prefix of its meters and output lines); {@code --trace stdout} prints its spans. */
    public RankZeroFront(String name, ServiceOptions options) {
        this(name, options, "stdout".equals(options.flag("--trace")) ? printing() : null);
    }

    /** A front whose requests and their operations are observed in {@code observations} (null: not observed). */
    public RankZeroFront(String name, ServiceOptions options, @Nullable ObservationRegistry observations) {
        this.name = name;
        this.options = options;
        this.observations = observations;
    }

    private static ObservationRegistry printing() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationTextPublisher(System.out::println));
        return registry;
    }

    /** The request timeout when the request names none. */
    public Duration defaultTimeout() {
        return options.timeout();
    }

    /**
     * Serves until {@code POST /shutdown} (or the end of {@code --load}) and the step loop ended.
     *
     * @param steps   the step loop: one step per request of the stream it is given, in order, then the stop step
     * @param routes  the service's own routes, next to health, metrics and shutdown
     * @param banner  what the service says once it listens
     * @param load    the workload of {@code --load}, or null
     * @return whether the step loop ended cleanly (false: the communicator failed)
     */
    public boolean serve(Communicator comm, Function<Flux<R>, Mono<Void>> steps, Consumer<ServiceRoutes> routes,
                         String banner, LoadGenerator.@Nullable Workload load) {
        Mono<Void> loop = steps.apply(Flux.create(sink -> requests = sink))
                .doOnError(e -> {
                    failed = true;
                    System.out.println(name + ": the step loop failed: " + e);
                    down.tryEmitError(new IllegalStateException("the service's communicator failed: " + e.getMessage(), e));
                })
                .onErrorResume(e -> Mono.empty())
                .cache();
        loop.subscribe();
        JcclObservations observed = observations == null ? null : JcclObservations.register(observations);
        try (JcclMetrics metrics = new JcclMetrics()) {
            metrics.bindTo(registry);
            DisposableServer server = HttpServer.create().host("127.0.0.1").port(options.port())
                    .route(routes(routes))
                    .bindNow(Duration.ofSeconds(30));
            System.out.println(name + ": " + banner + ", listening on http://127.0.0.1:" + server.port());
            Disposable progress = Flux.interval(Duration.ofSeconds(2)).map(t -> served.get()).distinctUntilChanged()
                    .buffer(2, 1).filter(p -> p.size() == 2)
                    .subscribe(p -> System.out.printf("%s: %d requests served, %.0f/s, %d in flight%n", name,
                            p.get(1), (p.get(1) - p.get(0)) / 2.0, inFlight.get()));
            if (load != null && options.flag("--load") != null) {
                selfLoad(URI.create("http://127.0.0.1:" + server.port()), comm, load);
            }
            loop.block();
            progress.dispose();
            server.disposeNow(Duration.ofSeconds(10));
            System.out.println(name + ": stopped after " + served.get() + " requests" + (failed ? " (communicator failed)" : ""));
            return !failed;
        } finally {
            if (observed != null) observed.close();
        }
    }

    /**
     * Every route of the service: its own ({@code own}), then health, metrics and shutdown, then 405 for a known path
     * asked with another method. {@link #serve} binds these; a test may bind them without a step loop (a request
     * that passes its checks is then answered 503).
     */
    public Consumer<HttpServerRoutes> routes(Consumer<ServiceRoutes> own) {
        return r -> {
            ServiceRoutes routes = new ServiceRoutes(r);
            own.accept(routes);
            routes.get("/health", (req, res) -> text(res, failed || stopping ? 503 : 200,
                            failed ? "DOWN" : stopping ? "STOPPING" : "UP"))
                    .get("/metrics", (req, res) -> res.header("Content-Type", "text/plain; version=0.0.4")
                            .sendString(Mono.fromCallable(registry::scrape)).then())
                    .post("/shutdown", (req, res) -> {
                        shutdown();
                        return text(res, 202, "stopping");
                    });
            routes.refuseOtherMethods();
        };
    }

    /**
     * Queues {@code request} for its step and answers it: {@code format}ted with status 200, or a status code. Call it
     * from the route's handler, after the request's input was checked.
     */
    public <T> Mono<Void> submit(HttpServerResponse res, long startNanos, R request, Mono<T> answer, Duration timeout,
                                 Function<T, String> format) {
        if (observations != null) request.observe(observations, name);
        synchronized (this) { // with shutdown(): a request is either queued before the stream completes, or refused
            FluxSink<R> sink = requests;
            if (failed || stopping || sink == null) {
                return refuse(res, startNanos, request, "unavailable", 503, failed ? "the service is down" : "the service is stopping");
            }
            if (inFlight.incrementAndGet() > options.maxInFlight()) {
                inFlight.decrementAndGet();
                return refuse(res, startNanos, request, "busy", 429, "more than " + options.maxInFlight() + " requests in flight");
            }
            sink.next(request);
        }
        return answer.or(down.asMono().then(Mono.empty())).timeout(timeout)
                .flatMap(value -> {
                    served.incrementAndGet();
                    record(startNanos, "ok");
                    request.endObservation("ok");
                    return res.status(200).header("Content-Type", "application/json").sendString(Mono.just(format.apply(value))).then();
                })
                .onErrorResume(TimeoutException.class, e -> {
                    request.abandon();
                    return refuse(res, startNanos, request, "timeout", 504, "no answer within " + timeout.toMillis() + " ms");
                })
                .onErrorResume(e -> refuse(res, startNanos, request, "unavailable", 503, String.valueOf(e.getMessage())))
                .doFinally(signal -> {
                    inFlight.decrementAndGet();
                    if (signal == SignalType.CANCEL) { // the client went away
                        request.abandon();
                        record(startNanos, "cancelled");
                        request.endObservation("cancelled");
                    }
                });
    }

    /** Answers {@code status} with {@code message}, counted under {@code outcome}. */
    public Mono<Void> reject(HttpServerResponse res, long startNanos, String outcome, int status, String message) {
        record(startNanos, outcome);
        return text(res, status, message);
    }

    private Mono<Void> refuse(HttpServerResponse res, long startNanos, R request, String outcome, int status, String message) {
        request.endObservation(outcome);
        return reject(res, startNanos, outcome, status, message);
    }

    private static Mono<Void> text(HttpServerResponse res, int status, String body) {
        return res.status(HttpResponseStatus.valueOf(status)).header("Content-Type", "text/plain")
                .sendString(Mono.just(body + "\n")).then();
    }

    private void record(long startNanos, String outcome) {
        Timer.builder(name.replace(' ', '.') + ".requests").description("HTTP requests by outcome").tag("outcome", outcome)
                .register(registry).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    private synchronized void shutdown() {
        if (stopping) return;
        stopping = true;
        FluxSink<R> sink = requests;
        if (sink != null) sink.complete();
    }

    /** {@code --load}: the load generator against this service, on its own thread, then the shutdown. */
    private void selfLoad(URI base, Communicator comm, LoadGenerator.Workload workload) {
        Thread load = new Thread(() -> {
            try {
                List<LoadGenerator.Row> rows = new LoadGenerator(base, workload).run(
                        LoadGenerator.levels(options.flags().get("--load")),
                        Long.parseLong(options.flags().getOrDefault("--load-requests", "20000")),
                        Duration.ofSeconds(Long.parseLong(options.flags().getOrDefault("--load-seconds", "5"))));
                String plot = options.flag("--plot");
                if (plot != null) {
                    LatencyPlot.write(Path.of(plot), name + ", " + comm.size() + " ranks, " + comm.backend().kind().id()
                            + " backend", rows);
                    System.out.println(name + ": plot written to " + plot);
                }
            } catch (Exception e) {
                System.out.println(name + ": load failed: " + e);
            } finally {
                shutdown();
            }
        }, name + "-load");
        load.start();
    }
}
