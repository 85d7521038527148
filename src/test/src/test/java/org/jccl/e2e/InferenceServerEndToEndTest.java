package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.examples.inference.InferenceServer;
import org.jccl.examples.inference.MlpModel;
import org.junit.jupiter.api.Test;

/**
 * The tensor-parallel inference server as two processes started by jccl's launcher (host backend over TCP): many
 * concurrent clients over real HTTP, every answer compared with the whole model computed in this JVM, requests
 * batched, and both ranks ran the same batches in the same order.
 */
class InferenceServerEndToEndTest {
    private static final int CLIENTS = 32;
    private static final int REQUESTS_PER_CLIENT = 8;
    private static final long SEED = 7;

    private final MlpModel reference = MlpModel.reference(SEED);

    @Test
    void concurrentClientsGetTheReferenceAnswersInBatchesRunInOneOrderOnEveryRank() throws Exception {
        String text;
        int code;
        // port any, 1024 in flight, 20 s timeout, batches of at most 16 within 20 ms, seed 7
        try (LaunchedService service = new LaunchedService(2, InferenceServer.class, "0", "1024", "20000", "16", "20",
                Long.toString(SEED))) {
            assertEquals(CLIENTS * REQUESTS_PER_CLIENT, concurrentInferencesAllCorrect(service));
            assertEquals(400, service.get("/infer?x=1,2,3").statusCode());
            assertEquals(400, service.get("/infer?x=" + "NaN,".repeat(MlpModel.IN - 1) + "1").statusCode());
            // The deadline is read as /embed reads it: not a number or not positive is refused.
            String x = "/infer?x=" + "0.5,".repeat(MlpModel.IN - 1) + "1";
            assertEquals(400, service.get(x + "&timeoutMs=zz").statusCode());
            assertEquals(400, service.get(x + "&timeoutMs=0").statusCode());
            assertEquals(200, service.get(x + "&timeoutMs=15000").statusCode());
            HttpResponse<String> post = service.http().send(HttpRequest.newBuilder(URI.create(service.base() + x))
                    .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode(), post.body());
            assertEquals(200, service.get("/health").statusCode());
            String metrics = service.get("/metrics").body();
            assertTrue(metrics.contains("inference_requests_seconds_count{outcome=\"ok\"} " + (CLIENTS * REQUESTS_PER_CLIENT + 1)), metrics);
            assertTrue(metrics.contains("operation=\"allGather\""), metrics);
            code = service.shutdownAndWait();
            text = service.output();
        }
        assertEquals(0, code, text);
        Matcher zero = Pattern.compile("\\[rank 0] rank 0: (\\d+) batches, order hash (\\w+)").matcher(text);
        Matcher one = Pattern.compile("\\[rank 1] rank 1: (\\d+) batches, order hash (\\w+)").matcher(text);
        assertTrue(zero.find() && one.find(), text);
        assertEquals(zero.group(1), one.group(1), text);
        assertEquals(zero.group(2), one.group(2), text);
        int batches = Integer.parseInt(zero.group(1));
        assertTrue(batches < CLIENTS * REQUESTS_PER_CLIENT, "requests were batched: " + batches + " batches");
    }

    /** Random inputs from many clients at once; returns the answers checked. */
    private int concurrentInferencesAllCorrect(LaunchedService service) {
        return service.concurrently(CLIENTS, REQUESTS_PER_CLIENT, random -> {
            float[] x = new float[MlpModel.IN];
            for (int i = 0; i < x.length; i++) x[i] = random.nextFloat() * 4 - 2;
            StringBuilder query = new StringBuilder();
            for (float v : x) query.append(query.length() > 0 ? "," : "").append(v);
            return new LaunchedService.Exchange() {
                @Override
                public String path() {
                    return "/infer?x=" + query;
                }

                @Override
                public void check(HttpResponse<String> response) {
                    assertMatches(reference.forward(x), response);
                }
            };
        });
    }

    /** The answer matches the whole model within float rounding (the ranks' partial sums are added in another order). */
    private static void assertMatches(float[] expected, HttpResponse<String> response) {
        assertEquals(200, response.statusCode(), response.body());
        String body = response.body();
        String[] values = body.substring(body.indexOf('[') + 1, body.lastIndexOf(']')).split(",");
        assertEquals(MlpModel.OUT, values.length, body);
        for (int i = 0; i < values.length; i++) {
            float got = Float.parseFloat(values[i]);
            assertEquals(expected[i], got, 1e-5f + 1e-4f * Math.abs(expected[i]), "output " + i + " of " + body);
        }
    }
}
