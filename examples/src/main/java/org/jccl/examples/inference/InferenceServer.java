package org.jccl.examples.inference;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.util.Objects;
import java.util.Random;
import java.util.function.Consumer;
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
 * A non-blocking inference server: a tensor-parallel {@link MlpModel} over all ranks, HTTP on rank 0 with dynamic
 * batching. Requests wait at most {@code max wait ms} for a batch of at most {@code max batch}; a batch forms while the
 * previous one runs, and each batch is one ordered step over all ranks ({@link InferenceSteps}).
 *
 * <pre>
 *   launcher --nproc N -- org.jccl.examples.inference.InferenceServer [port (0: any)] [max requests in flight] [timeout ms]
 *       [max batch (32)] [max wait ms (2)] [seed (1)] [--batch-step graph|eager]
 *       [--load 1,4,16,64,256 [--load-requests N] [--load-seconds S] [--plot FILE.svg]]
 * </pre>
 *
 * On GPUs each batch size's step is captured after its first run and replayed as one graph launch
 * ({@code --batch-step graph}, the default; {@link BatchGraphs}); {@code eager} issues its five operations every time.
 *
 * {@code GET /infer?x=v1,...,v64[&timeoutMs=T]} answers {@code {"y":[...32 values]}}; 400 for other than
 * {@link MlpModel#IN} finite numbers or a {@code timeoutMs} other than 1..60000 ({@link RequestInput}), 405 another
 * method, and the front's codes, health, metrics and shutdown ({@link RankZeroFront}).
 */
public final class InferenceServer {
    private InferenceServer() {
    }

    public static void main(String[] args) throws Exception {
        ServiceOptions options = ServiceOptions.parse(args);
        int maxBatch = options.intArg(0, 32);
        Duration maxWait = Duration.ofMillis(options.intArg(1, 2));
        long seed = options.intArg(2, 1);
        String batchStep = Objects.requireNonNullElse(options.flag("--batch-step"), "graph");
        if (!batchStep.equals("graph") && !batchStep.equals("eager")) {
            throw new IllegalArgumentException("--batch-step is graph or eager, not " + batchStep);
        }
        boolean graphs = batchStep.equals("graph");
        ServiceRanks.run("inference", "batches",
                (backend, comm, steps) -> new InferenceSteps(backend, comm, steps, new MlpModel(seed, comm.rank(), comm.size()),
                        maxBatch, graphs),
                (comm, steps) -> {
                    RankZeroFront<InferRequest> front = new RankZeroFront<>("inference", options);
                    return front.serve(comm, requests -> steps.lead(requests.bufferTimeout(maxBatch, maxWait, true)),
                            routes(front),
                            "MLP " + MlpModel.IN + "-" + MlpModel.HIDDEN + "-" + MlpModel.IN + "-" + MlpModel.OUT + " over "
                                    + comm.size() + " ranks (seed " + seed + "), batches of at most " + maxBatch + " within "
                                    + maxWait.toMillis() + " ms, batch step " + batchStep,
                            workload(seed));
                });
    }

    /** The service's own route, {@code GET /infer}. */
    static Consumer<ServiceRoutes> routes(RankZeroFront<InferRequest> front) {
        return routes -> routes.get("/infer", (req, res) -> infer(front, req, res));
    }

    private static Mono<Void> infer(RankZeroFront<InferRequest> front, HttpServerRequest req, HttpServerResponse res) {
        long start = System.nanoTime();
        InferRequest request;
        Duration timeout;
        try {
            QueryStringDecoder query = new QueryStringDecoder(req.uri());
            request = new InferRequest(parseInput(RequestInput.param(query, "x", null)));
            timeout = RequestInput.timeout(query, front.defaultTimeout());
        } catch (IllegalArgumentException e) {
            return front.reject(res, start, "bad_request", 400, e.getMessage());
        }
        return front.submit(res, start, request, request.answer(), timeout, InferenceServer::json);
    }

    /** {@link MlpModel#IN} finite numbers, comma-separated. */
    static float[] parseInput(String text) {
        String[] parts = text.split(",");
        if (parts.length != MlpModel.IN) throw new IllegalArgumentException("x needs " + MlpModel.IN + " values, not " + parts.length);
        float[] x = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                x[i] = Float.parseFloat(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number: " + RequestInput.echo(parts[i]), e);
            }
            if (!Float.isFinite(x[i])) throw new IllegalArgumentException("not finite: " + RequestInput.echo(parts[i]));
        }
        return x;
    }

    static String json(float[] y) {
        StringBuilder sb = new StringBuilder("{\"y\":[");
        for (int i = 0; i < y.length; i++) sb.append(i > 0 ? "," : "").append(y[i]);
        return sb.append("]}").toString();
    }

    /** Input {@code index} of {@code --load}, the same for the request and its check. */
    static float[] input(long index) {
        Random random = new Random(index);
        float[] x = new float[MlpModel.IN];
        for (int i = 0; i < x.length; i++) x[i] = random.nextFloat() * 2 - 1;
        return x;
    }

    /** Whether {@code body} holds {@code expected} within float rounding of a sum split across ranks. */
    public static boolean close(float[] expected, String body) {
        String values = body.substring(body.indexOf('[') + 1, body.lastIndexOf(']'));
        String[] parts = values.split(",");
        if (parts.length != expected.length) return false;
        for (int i = 0; i < parts.length; i++) {
            float got = Float.parseFloat(parts[i]);
            if (!(Math.abs(got - expected[i]) <= 1e-5f + 1e-4f * Math.abs(expected[i]))) return false;
        }
        return true;
    }

    /** {@code --load}: random inputs, each answer compared with the single-process reference. */
    private static LoadGenerator.Workload workload(long seed) {
        MlpModel reference = MlpModel.reference(seed);
        return new LoadGenerator.Workload() {
            @Override
            public String path(long index) {
                StringBuilder sb = new StringBuilder("/infer?x=");
                for (float v : input(index)) sb.append(sb.length() > 9 ? "," : "").append(v);
                return sb.toString();
            }

            @Override
            public boolean check(long index, String body) {
                return close(reference.forward(input(index)), body);
            }
        };
    }
}
