package org.jccl.examples.embedding;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.jccl.examples.bench.LoadGenerator;
import org.jccl.examples.serving.RankZeroFront;
import org.jccl.examples.serving.RequestInput;
import org.jccl.examples.serving.ServiceOptions;
import org.jccl.examples.serving.ServiceRanks;
import org.jccl.examples.serving.ServiceRoutes;
import reactor.core.publisher.Mono;
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
 * {@code GET /metrics}; {@code POST /shutdown} ({@link RankZeroFront}). Status codes: 400 bad ids, a
 * {@code timeoutMs} other than 1..60000 or a {@code computeMs} other than 0..60000 ({@link RequestInput}), 405 another
 * method, and the front's (429, 503, 504).
 */
public final class EmbeddingService {
    private EmbeddingService() {
    }

    public static void main(String[] args) throws Exception {
        ServiceOptions options = ServiceOptions.parse(args);
        ServiceRanks.run("embedding", "steps", LookupSteps::new, (comm, steps) -> {
            RankZeroFront<LookupRequest> front = new RankZeroFront<>("embedding", options);
            return front.serve(comm, steps::lead, routes(front),
                    comm.size() + " shards of " + EmbeddingTable.ROWS + " x " + EmbeddingTable.DIM + " floats", WORKLOAD);
        });
    }

    /** The service's own route, {@code GET /embed}. */
    static Consumer<ServiceRoutes> routes(RankZeroFront<LookupRequest> front) {
        return routes -> routes.get("/embed", (req, res) -> embed(front, req, res));
    }

    private static Mono<Void> embed(RankZeroFront<LookupRequest> front, HttpServerRequest req, HttpServerResponse res) {
        long start = System.nanoTime();
        LookupRequest request;
        Duration timeout;
        try {
            QueryStringDecoder query = new QueryStringDecoder(req.uri());
            request = new LookupRequest(parseIds(RequestInput.param(query, "ids", null)),
                    (int) RequestInput.millis(RequestInput.param(query, "computeMs", "0"), "computeMs", 0));
            timeout = RequestInput.timeout(query, front.defaultTimeout());
        } catch (IllegalArgumentException e) {
            return front.reject(res, start, "bad_request", 400, e.getMessage());
        }
        return front.submit(res, start, request, request.answer(), timeout, rows -> json(request.ids, rows));
    }

    /** {@code --load}: 1 to 16 random ids per request, each answer compared with the table's formula. */
    private static final LoadGenerator.Workload WORKLOAD = new LoadGenerator.Workload() {
        @Override
        public String path(long index) {
            return "/embed?ids=" + Arrays.stream(randomIds(index)).mapToObj(Integer::toString).collect(Collectors.joining(","));
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
    };

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
                throw new IllegalArgumentException("not an id: " + RequestInput.echo(parts[i]), e);
            }
            if (ids[i] < 0 || ids[i] >= EmbeddingTable.ROWS) {
                throw new IllegalArgumentException("id " + ids[i] + " outside 0.." + (EmbeddingTable.ROWS - 1));
            }
        }
        return ids;
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

    /** Request {@code index}'s ids under {@code --load}: 1 to 16 ids, the same for the request and its check. */
    private static int[] randomIds(long index) {
        Random random = new Random(index);
        return random.ints(1 + random.nextInt(16), 0, EmbeddingTable.ROWS).toArray();
    }
}
