package org.jccl.examples.serving;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A front's routes bound on loopback without a step loop or a communicator: what a route answers before it queues a
 * request (bad input, a wrong method) is answered for real over HTTP; a request that passes its checks gets 503.
 */
public final class RoutesUnderTest implements AutoCloseable {
    private final DisposableServer server;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    public <R extends PendingRequest<?>> RoutesUnderTest(RankZeroFront<R> front, Consumer<ServiceRoutes> own) {
        server = HttpServer.create().host("127.0.0.1").port(0).route(front.routes(own)).bindNow(Duration.ofSeconds(30));
    }

    /** A front named {@code name} with default options. */
    public static <R extends PendingRequest<?>> RankZeroFront<R> front(String name) {
        return new RankZeroFront<>(name, ServiceOptions.parse(new String[0]));
    }

    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send("GET", path);
    }

    public HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30)).method(method, HttpRequest.BodyPublishers.noBody()).build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** The value of {@code Allow}, or an empty list. */
    public static List<String> allow(HttpResponse<String> response) {
        return response.headers().allValues("Allow");
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
