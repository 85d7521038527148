package org.jccl.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.core.launch.Launcher;

/**
 * An example HTTP service started by jccl's launcher (its ranks as processes) on a background thread, with an HTTP
 * client for it. {@link #close()} asks the service to shut down (if it still runs) and waits for the launcher.
 */
final class LaunchedService implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");

    private final ByteArrayOutputStream sink = new ByteArrayOutputStream();
    private final CompletableFuture<Integer> job;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final String base;

    /** Launches {@code nproc} ranks of {@code mainClass} with {@code args} and waits until rank 0 listens. */
    LaunchedService(int nproc, Class<?> mainClass, String... args) {
        PrintStream out = new PrintStream(new Synchronized(sink), true, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of("--nproc", Integer.toString(nproc), "--", mainClass.getName()));
        command.addAll(List.of(args));
        // Its own thread: the launcher blocks while the job runs, and the common pool may have one worker on 2 cores.
        job = new CompletableFuture<>();
        Thread launcher = new Thread(() -> {
            try {
                job.complete(Launcher.run(command, out, out));
            } catch (Throwable t) {
                job.completeExceptionally(t);
            }
        }, "launched-service");
        launcher.setDaemon(true);
        launcher.start();
        await().atMost(Duration.ofSeconds(90)).until(() -> job.isDone() || LISTENING.matcher(output()).find());
        Matcher m = LISTENING.matcher(output());
        if (!m.find()) {
            ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
            fail(output());
        }
        base = m.group(1);
    }

    /** {@code http://127.0.0.1:PORT}. */
    String base() {
        return base;
    }

    HttpClient http() {
        return http;
    }

    /** A GET of {@code path} (e.g. {@code /health}). */
    HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).build();
    }

    HttpResponse<String> get(String path) throws Exception {
        return http.send(request(path), HttpResponse.BodyHandlers.ofString());
    }

    /** Everything the ranks printed so far, each line prefixed {@code [rank N] }. */
    String output() {
        synchronized (sink) {
            return sink.toString(StandardCharsets.UTF_8);
        }
    }

    /** One request of a client and the check of its answer. */
    interface Exchange {
        String path();

        void check(HttpResponse<String> response);
    }

    /**
     * {@code clients} clients at once, each sending {@code perClient} requests one after the other, made by
     * {@code next} from the client's own random numbers (seeded by its index); returns the answers checked.
     */
    int concurrently(int clients, int perClient, Function<Random, Exchange> next) {
        AtomicInteger checked = new AtomicInteger();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            Random random = new Random(c);
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (int r = 0; r < perClient; r++) {
                Exchange exchange = next.apply(random);
                chain = chain.thenCompose(v -> http.sendAsync(request(exchange.path()), HttpResponse.BodyHandlers.ofString()))
                        .thenAccept(response -> {
                            exchange.check(response);
                            checked.incrementAndGet();
                        });
            }
            loops.add(chain);
        }
        CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).orTimeout(60, TimeUnit.SECONDS).join();
        return checked.get();
    }

    /** Shuts the service down and returns the launcher's exit code. */
    int shutdownAndWait() throws Exception {
        if (!job.isDone()) {
            http.send(HttpRequest.newBuilder(URI.create(base + "/shutdown")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        return job.get(60, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        try {
            shutdownAndWait();
        } finally {
            // A test that failed early, or a shutdown that did not end the job: no rank JVM may outlive the test.
            ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** The launcher's ranks write from several threads while the test reads. */
    private static final class Synchronized extends OutputStream {
        private final ByteArrayOutputStream sink;

        Synchronized(ByteArrayOutputStream sink) {
            this.sink = sink;
        }

        @Override
        public void write(int b) {
            synchronized (sink) {
                sink.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (sink) {
                sink.write(b, off, len);
            }
        }
    }
}
