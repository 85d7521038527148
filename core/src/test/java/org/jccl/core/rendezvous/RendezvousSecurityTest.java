package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Who gets in: the secret, the rank claims, the range checks, and what a refused join leaves behind (nothing). */
class RendezvousSecurityTest {
    private RendezvousServer server;

    @BeforeEach
    void start() {
        server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(4).build());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void listensOnLoopbackByDefault() {
        assertTrue(server.address().getAddress().isLoopbackAddress(), server.address().toString());
    }

    @Test
    void wrongSecretIsRefusedAndLeavesNoTrace() {
        RendezvousOptions wrong = TestServers.clientOptions(server, 1, 4).toBuilder()
                .secret("another-secret-of-enough-length").build();
        RendezvousException e = assertThrows(RendezvousException.class, () -> RendezvousClient.connectNow(wrong));
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, e.errorCode(), e.getMessage());
        assertEquals(Set.of(), server.liveRanks(), "a refused join claims no rank");
        assertEquals(Set.of(), server.keys());
        // The rank it tried to claim is still free for the real owner.
        try (RendezvousClient real = TestServers.connect(server, 1, 4)) {
            real.setNow("k", new byte[] {1});
            assertEquals(Set.of(1), server.liveRanks());
        }
    }

    @Test
    void clientRefusesAServerThatDoesNotKnowTheSecret() {
        try (RendezvousServer impostor = RendezvousServer.bindNow(TestServers.serverOptions()
                .secret("impostor-secret-0123456789").build())) {
            RendezvousOptions options = TestServers.clientOptions(server, 0, 0).toBuilder().port(impostor.port()).build();
            // The impostor refuses our proof first; either way no client comes out of it.
            assertThrows(RendezvousException.class, () -> RendezvousClient.connectNow(options));
        }
    }

    @Test
    void aLiveRankCannotBeClaimedTwice() {
        try (RendezvousClient first = TestServers.connect(server, 2, 4)) {
            first.setNow("mine", "first".getBytes(StandardCharsets.UTF_8));
            RendezvousException e = assertThrows(RendezvousException.class, () -> TestServers.connect(server, 2, 4));
            assertEquals(ErrorCode.RANK_TAKEN, e.errorCode(), e.getMessage());
            assertEquals(Set.of(2), server.liveRanks());
            assertEquals(Set.of("mine"), server.keys());
            assertTrue(first.isConnected(), "the rightful owner keeps its connection");
            assertArrayEquals("first".getBytes(StandardCharsets.UTF_8), first.getNow("mine", Duration.ofSeconds(1)));
        }
    }

    @Test
    void aRankThatLeftCanJoinAgain() {
        TestServers.connect(server, 3, 4).close();
        try (RendezvousClient again = TestServers.connect(server, 3, 4)) {
            assertEquals(Set.of(3), server.liveRanks());
            assertEquals(Set.of(), again.deadRanksNow(), "a clean leave is not a death");
        }
    }

    @Test
    void ranksOutsideTheJobAndWrongWorldSizesAreRefused() {
        RendezvousException outside = assertThrows(RendezvousException.class, () -> TestServers.connect(server, 7, 0));
        assertEquals(ErrorCode.BAD_REQUEST, outside.errorCode());
        RendezvousException size = assertThrows(RendezvousException.class, () -> TestServers.connect(server, 1, 3));
        assertEquals(ErrorCode.BAD_REQUEST, size.errorCode());
        assertEquals(Set.of(), server.liveRanks());
    }

    @Test
    void observersWithoutARankMayJoinManyTimes() {
        try (RendezvousClient a = TestServers.connect(server, RendezvousOptions.NO_RANK, 0);
             RendezvousClient b = TestServers.connect(server, RendezvousOptions.NO_RANK, 0)) {
            a.setNow("x", new byte[] {1});
            assertArrayEquals(new byte[] {1}, b.getNow("x", Duration.ofSeconds(1)));
            assertEquals(Set.of(), server.liveRanks());
        }
    }

    @Test
    void aPortInUseFailsToBindWithAClearError() {
        RendezvousOptions same = TestServers.serverOptions().port(server.port()).build();
        RendezvousException e = assertThrows(RendezvousException.class, () -> RendezvousServer.bindNow(same));
        assertTrue(e.getMessage().contains("cannot listen on"), e.getMessage());
    }

    @Test
    void anUnreachableServerFailsTheConnectAfterItsTimeout() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        RendezvousOptions options = TestServers.serverOptions().port(closedPort).rank(0)
                .timeout(Duration.ofMillis(600)).build();
        RendezvousException e = assertThrows(RendezvousException.class, () -> RendezvousClient.connectNow(options));
        assertTrue(e.getMessage().contains("cannot reach"), e.getMessage());
    }

    @Test
    void optionsRefuseWeakOrMissingSecretsAndBadCombinations() {
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().build());
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().secret("short").build());
        assertThrows(InvalidArgumentException.class, () -> TestServers.serverOptions()
                .heartbeatInterval(Duration.ofSeconds(5)).deadAfter(Duration.ofSeconds(5)).build());
        assertThrows(InvalidArgumentException.class, () -> TestServers.serverOptions().rank(4).worldSize(4).build());
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().maxFrameBytes(100));
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().port(70000));
        assertTrue(TestServers.serverOptions().build().toString().indexOf(TestServers.SECRET) < 0,
                "the secret is never printed");
    }
}
