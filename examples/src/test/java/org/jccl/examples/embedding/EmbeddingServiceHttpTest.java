package org.jccl.examples.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.List;
import org.jccl.examples.serving.RankZeroFront;
import org.jccl.examples.serving.RoutesUnderTest;
import org.junit.jupiter.api.Test;

/** What /embed answers before a request reaches a step: bad input 400 (echoing little of it), another method 405. */
class EmbeddingServiceHttpTest {
    private final RankZeroFront<LookupRequest> front = RoutesUnderTest.front("embedding");

    @Test
    void badDeadlinesAreRefusedAs400() throws Exception {
        try (RoutesUnderTest http = new RoutesUnderTest(front, EmbeddingService.routes(front))) {
            assertEquals(400, http.get("/embed?ids=1&timeoutMs=zz").statusCode());
            HttpResponse<String> zero = http.get("/embed?ids=1&timeoutMs=0");
            assertEquals(400, zero.statusCode(), "a deadline of 0 ms is refused, not answered 504 at once");
            assertTrue(zero.body().contains("positive"), zero.body());
            assertEquals(400, http.get("/embed?ids=1&computeMs=-1").statusCode());
            assertEquals(503, http.get("/embed?ids=1&timeoutMs=1").statusCode(), "valid: queued, here without a step loop");
        }
    }

    @Test
    void aWrongMethodIs405NamingTheAllowedOne() throws Exception {
        try (RoutesUnderTest http = new RoutesUnderTest(front, EmbeddingService.routes(front))) {
            HttpResponse<String> post = http.send("POST", "/embed?ids=1");
            assertEquals(405, post.statusCode(), post.body());
            assertEquals(List.of("GET"), RoutesUnderTest.allow(post));
            assertEquals(405, http.send("DELETE", "/health").statusCode());
            HttpResponse<String> getShutdown = http.get("/shutdown");
            assertEquals(405, getShutdown.statusCode());
            assertEquals(List.of("POST"), RoutesUnderTest.allow(getShutdown));
            assertEquals(404, http.get("/nowhere").statusCode());
            assertEquals(200, http.get("/health").statusCode());
        }
    }

    @Test
    void a400EchoesAShortPieceOfALongInput() throws Exception {
        try (RoutesUnderTest http = new RoutesUnderTest(front, EmbeddingService.routes(front))) {
            HttpResponse<String> longIds = http.get("/embed?ids=" + "x".repeat(3000));
            assertEquals(400, longIds.statusCode());
            assertTrue(longIds.body().length() < 200, longIds.body());
            assertTrue(longIds.body().contains("3000 characters"), longIds.body());
        }
    }
}
