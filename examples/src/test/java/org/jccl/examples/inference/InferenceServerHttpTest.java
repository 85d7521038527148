package org.jccl.examples.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.List;
import org.jccl.examples.serving.RankZeroFront;
import org.jccl.examples.serving.RoutesUnderTest;
import org.junit.jupiter.api.Test;

/** What /infer answers before a request reaches a batch: the same 400s and 405 as /embed. */
class InferenceServerHttpTest {
    private static final String X = "x=" + "0.5,".repeat(MlpModel.IN - 1) + "1";
    private final RankZeroFront<InferRequest> front = RoutesUnderTest.front("inference");

    @Test
    void badDeadlinesAreRefusedAs400LikeEmbed() throws Exception {
        try (RoutesUnderTest http = new RoutesUnderTest(front, InferenceServer.routes(front))) {
            HttpResponse<String> letters = http.get("/infer?" + X + "&timeoutMs=zz");
            assertEquals(400, letters.statusCode(), "timeoutMs is read, not ignored");
            assertTrue(letters.body().contains("timeoutMs"), letters.body());
            assertEquals(400, http.get("/infer?" + X + "&timeoutMs=0").statusCode());
            assertEquals(503, http.get("/infer?" + X + "&timeoutMs=250").statusCode(), "valid: queued, here without a step loop");
        }
    }

    @Test
    void aWrongMethodIs405AndA400EchoesLittle() throws Exception {
        try (RoutesUnderTest http = new RoutesUnderTest(front, InferenceServer.routes(front))) {
            HttpResponse<String> put = http.send("PUT", "/infer?" + X);
            assertEquals(405, put.statusCode());
            assertEquals(List.of("GET"), RoutesUnderTest.allow(put));
            HttpResponse<String> longValue = http.get("/infer?x=" + "9".repeat(3000) + ",1" + ",1".repeat(MlpModel.IN - 2));
            assertEquals(400, longValue.statusCode());
            assertTrue(longValue.body().length() < 200, longValue.body());
        }
    }
}
