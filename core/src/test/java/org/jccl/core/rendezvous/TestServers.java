package org.jccl.core.rendezvous;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Options for tests: loopback, any free port, a fixed secret, short limits so failures show quickly. */
final class TestServers {
    static final String SECRET = "test-secret-0123456789abcdef";
    static final byte[] SECRET_BYTES = SECRET.getBytes(StandardCharsets.UTF_8);

    private TestServers() {
    }

    static RendezvousOptions.Builder serverOptions() {
        return RendezvousOptions.builder().port(0).secret(SECRET).timeout(Duration.ofSeconds(10))
                .heartbeatInterval(Duration.ofMillis(200)).deadAfter(Duration.ofSeconds(2))
                .handshakeTimeout(Duration.ofSeconds(2)).maxFrameBytes(64 * 1024);
    }

    static RendezvousOptions clientOptions(RendezvousServer server, int rank, int worldSize) {
        return serverOptions().port(server.port()).rank(rank).worldSize(worldSize).build();
    }

    static RendezvousClient connect(RendezvousServer server, int rank, int worldSize) {
        return RendezvousClient.connectNow(clientOptions(server, rank, worldSize));
    }
}
