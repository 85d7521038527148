package org.jccl.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.examples.embedding.EmbeddingService;
import org.jccl.examples.embedding.EmbeddingTable;
import org.junit.jupiter.api.Test;

/**
 * The sharded embedding service as two processes started by jccl's launcher (host backend over TCP): real HTTP on
 * loopback from many concurrent clients, every answer checked against the table's formula; bad input, a timeout and a
 * client that disconnects mid-step each answered as documented, and every rank ran the same steps in the same order.
 */
class EmbeddingServiceEndToEndTest {
    private static final int CLIENTS = 48;
    private static final int REQUESTS_PER_CLIENT = 8;

    @Test
    void concurrentClientsGetCorrectRowsAndErrorsTimeoutsAndDisconnectsKeepEveryRankInStep() throws Exception {
        String text;
        int code;
        // port any, 1024 in flight, 10 s default timeout
        try (LaunchedService service = new LaunchedService(2, EmbeddingService.class, "0", "1024", "10000")) {
            int answered = concurrentLookupsAllCorrect(service);
            assertEquals(CLIENTS * REQUESTS_PER_CLIENT, answered);

            assertEquals(400, service.get("/embed?ids=1,x").statusCode());
            assertEquals(400, service.get("/embed?ids=" + EmbeddingTable.ROWS).statusCode());
            assertEquals(400, service.get("/embed").statusCode());

            disconnectWhileTheStepIsInFlight(service, answered);
            // The abandoned step still ran to its end on every rank (its second all-to-all completed).
            await().atMost(Duration.ofSeconds(20)).until(() -> completed(service, "allToAll") == 2L * (answered + 1));

            // The queue is empty, so this step begins at once, and outlives its request's timeout.
            HttpResponse<String> late = service.get("/embed?ids=3&computeMs=600&timeoutMs=150");
            assertEquals(504, late.statusCode(), late.body());
            checkRows(new int[] {7, 8, 9, 65535}, service.get("/embed?ids=7,8,9,65535"));

            HttpResponse<String> health = service.get("/health");
            assertEquals(200, health.statusCode());
            assertEquals("UP", health.body().trim());
            String metrics = service.get("/metrics").body();
            assertTrue(metrics.contains("embedding_requests_seconds_count{outcome=\"cancelled\"} 1"), metrics);
            assertTrue(metrics.contains("embedding_requests_seconds_count{outcome=\"timeout\"} 1"), metrics);
            assertTrue(metrics.contains("embedding_requests_seconds_count{outcome=\"bad_request\"} 3"), metrics);
            assertTrue(metrics.contains("jccl_operations_in_flight{"), metrics);
            assertTrue(metrics.contains("jccl_operations_bytes_total{"), metrics);
            code = service.shutdownAndWait();
            text = service.output();
        }
        assertEquals(0, code, text);
        // Every rank ran every step — the timed-out and the abandoned one included — in the same order.
        int steps = CLIENTS * REQUESTS_PER_CLIENT + 3;
        Matcher zero = Pattern.compile("\\[rank 0] rank 0: (\\d+) steps, order hash (\\w+)").matcher(text);
        Matcher one = Pattern.compile("\\[rank 1] rank 1: (\\d+) steps, order hash (\\w+)").matcher(text);
        assertTrue(zero.find() && one.find(), text);
        assertEquals(Integer.toString(steps), zero.group(1), text);
        assertEquals(zero.group(1), one.group(1), text);
        assertEquals(zero.group(2), one.group(2), text);
    }

    /** Lookups of 1 to 24 random ids from many clients at once; returns the answers checked. */
    private int concurrentLookupsAllCorrect(LaunchedService service) {
        return service.concurrently(CLIENTS, REQUESTS_PER_CLIENT, random -> {
            int[] ids = random.ints(1 + random.nextInt(24), 0, EmbeddingTable.ROWS).toArray();
            return new LaunchedService.Exchange() {
                @Override
                public String path() {
                    return "/embed?ids=" + join(ids);
                }

                @Override
                public void check(HttpResponse<String> response) {
                    checkRows(ids, response);
                }
            };
        });
    }

    /** A raw client asks for a slow step, and hangs up once the step's first collective completed. */
    private void disconnectWhileTheStepIsInFlight(LaunchedService service, int stepsBefore) throws Exception {
        URI uri = URI.create(service.base());
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.getOutputStream().write(("GET /embed?ids=11,12&computeMs=5000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            await().atMost(Duration.ofSeconds(20)).until(() -> completed(service, "broadcast") == stepsBefore + 1);
        }
        await().atMost(Duration.ofSeconds(20))
                .until(() -> service.get("/metrics").body().contains("embedding_requests_seconds_count{outcome=\"cancelled\"} 1"));
    }

    /** Rank 0's successful {@code operation}s (one broadcast and two all-to-alls per step), from the Prometheus text. */
    private long completed(LaunchedService service, String operation) throws Exception {
        for (String line : service.get("/metrics").body().split("\n")) {
            if (line.startsWith("jccl_operations_seconds_count{") && line.contains("operation=\"" + operation + "\"")
                    && line.contains("outcome=\"success\"")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    private static void checkRows(int[] ids, HttpResponse<String> response) {
        assertEquals(200, response.statusCode(), response.body());
        String body = response.body();
        String rows = body.substring(body.indexOf("\"rows\":[[") + 9, body.lastIndexOf("]]"));
        String[] each = rows.split("\\],\\[");
        assertEquals(ids.length, each.length, body);
        for (int i = 0; i < ids.length; i++) {
            String[] values = each[i].split(",");
            assertEquals(EmbeddingTable.DIM, values.length, body);
            for (int j = 0; j < EmbeddingTable.DIM; j++) {
                assertEquals(EmbeddingTable.value(ids[i], j), Float.parseFloat(values[j]), "row " + ids[i] + " column " + j);
            }
        }
    }

    private static String join(int[] ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) sb.append(sb.length() > 0 ? "," : "").append(id);
        return sb.toString();
    }
}
