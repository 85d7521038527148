package org.jccl.examples.serving;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * A service's routes, remembered by path: a request for a known path with another method is answered 405 with the
 * methods it allows ({@code Allow}), as HTTP asks, and only an unknown path is 404.
 */
public final class ServiceRoutes {
    private final HttpServerRoutes routes;
    private final Map<String, Set<String>> methods = new LinkedHashMap<>();

    ServiceRoutes(HttpServerRoutes routes) {
        this.routes = routes;
    }

    /** Serves {@code GET path}. */
    public ServiceRoutes get(String path, BiFunction<? super HttpServerRequest, ? super HttpServerResponse,
            ? extends Publisher<Void>> handler) {
        routes.get(path, handler);
        return allow(path, "GET");
    }

    /** Serves {@code POST path}. */
    public ServiceRoutes post(String path, BiFunction<? super HttpServerRequest, ? super HttpServerResponse,
            ? extends Publisher<Void>> handler) {
        routes.post(path, handler);
        return allow(path, "POST");
    }

    private ServiceRoutes allow(String path, String method) {
        methods.computeIfAbsent(path, p -> new LinkedHashSet<>()).add(method);
        return this;
    }

    /** Last: a known path whose method no route took is answered 405, naming the methods it has. */
    void refuseOtherMethods() {
        routes.route(req -> methods.containsKey(req.fullPath()), (req, res) -> {
            String allowed = String.join(", ", methods.get(req.fullPath()));
            return res.status(HttpResponseStatus.METHOD_NOT_ALLOWED).header("Allow", allowed)
                    .header("Content-Type", "text/plain")
                    .sendString(Mono.just(req.method() + " is not allowed on " + req.fullPath() + "; use " + allowed + "\n"))
                    .then();
        });
    }
}
