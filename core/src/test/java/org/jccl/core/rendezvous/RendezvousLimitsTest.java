package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The store's bounds: total bytes of keys and values, keys per client connection; refused writes store nothing. */
class RendezvousLimitsTest {
    private static final Duration SHORT = Duration.ofMillis(500);

    private RendezvousServer server;

    @AfterEach
    void stop() {
        if (server != null) server.close();
    }

    private RendezvousServer start(long maxStoreBytes, int maxKeysPerClient) {
        server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(3)
                .maxStoreBytes(maxStoreBytes).maxKeysPerClient(maxKeysPerClient).build());
        return server;
    }

    private static void assertLimitExceeded(Runnable write, String mentions) {
        RendezvousException e = assertThrows(RendezvousException.class, write::run);
        assertEquals(ErrorCode.LIMIT_EXCEEDED, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains(mentions), e.getMessage());
    }

    @Test
    void theTotalSizeIsCappedExactlyAndNothingIsStoredPastIt() {
        start(1000, 100);
        try (RendezvousClient a = TestServers.connect(server, 0, 3);
             RendezvousClient b = TestServers.connect(server, 1, 3)) {
            a.setNow("a", new byte[999]); // 1 key byte + 999 value bytes: exactly the limit
            assertLimitExceeded(() -> b.setNow("b", new byte[0]), "maxStoreBytes");
            assertLimitExceeded(() -> b.addNow("counter", 1), "maxStoreBytes");
            assertLimitExceeded(() -> b.compareAndSetNow("cas", null, new byte[0]), "maxStoreBytes");
            assertLimitExceeded(() -> a.setNow("a", new byte[1000]), "maxStoreBytes"); // replacing may not grow it
            assertEquals(Set.of("a"), server.keys());
            assertArrayEquals(new byte[999], b.getNow("a", SHORT), "the refused replacement changed nothing");
            assertTrue(a.isConnected() && b.isConnected(), "a refused write keeps the connection");

            a.setNow("a", new byte[10]); // shrinking is always allowed, and frees room
            b.setNow("b", new byte[988]); // 11 + 989 = 1000
            assertLimitExceeded(() -> b.setNow("c", new byte[0]), "maxStoreBytes");
            assertTrue(a.deleteNow("b"));
            b.setNow("c", new byte[0]);
            assertEquals(Set.of("a", "c"), server.keys());
        }
    }

    @Test
    void keysAreCountedAgainstTheConnectionThatCreatedThem() {
        start(1 << 20, 3);
        try (RendezvousClient b = TestServers.connect(server, 1, 3)) {
            try (RendezvousClient a = TestServers.connect(server, 0, 3)) {
                for (int i = 1; i <= 3; i++) a.setNow("a" + i, utf8("x"));
                assertLimitExceeded(() -> a.setNow("a4", utf8("x")), "maxKeysPerClient");
                assertLimitExceeded(() -> a.addNow("a4", 1), "maxKeysPerClient");
                assertLimitExceeded(() -> a.compareAndSetNow("a4", null, utf8("x")), "maxKeysPerClient");
                assertEquals(Optional.empty(), b.tryGetNow("a4"));
                assertTrue(a.isConnected(), "a refused write keeps the connection");

                // Replacing a key is not creating one, whoever created it; b counts its own keys.
                a.setNow("a1", utf8("y"));
                b.setNow("b1", utf8("x"));
                a.setNow("b1", utf8("written by a"));
                b.setNow("b2", utf8("x"));
                b.setNow("b3", utf8("x"));
                assertLimitExceeded(() -> b.setNow("b4", utf8("x")), "maxKeysPerClient");

                // A deleted key no longer counts against its creator, whoever deleted it.
                assertTrue(b.deleteNow("a1"));
                a.setNow("a4", utf8("x"));
                assertLimitExceeded(() -> a.setNow("a5", utf8("x")), "maxKeysPerClient");
            }
            // A new connection starts with no keys of its own; the keys of the one that closed stay.
            try (RendezvousClient again = TestServers.connect(server, 0, 3)) {
                for (int i = 5; i <= 7; i++) again.setNow("a" + i, utf8("x"));
                assertArrayEquals(utf8("written by a"), again.getNow("b1", SHORT));
            }
            assertEquals(Set.of("a2", "a3", "a4", "a5", "a6", "a7", "b1", "b2", "b3"), server.keys());
        }
    }

    @Test
    void settingsAreReadFromTheEnvironmentAndChecked() {
        Map<String, String> props = Map.of("jccl.rendezvous.secret", TestServers.SECRET,
                "jccl.rendezvous.maxStoreBytes", "5000000000", "jccl.rendezvous.maxKeysPerClient", "7");
        props.forEach(System::setProperty);
        try {
            RendezvousOptions o = RendezvousOptions.fromEnvironment();
            assertEquals(5_000_000_000L, o.maxStoreBytes());
            assertEquals(7, o.maxKeysPerClient());
            System.setProperty("jccl.rendezvous.maxStoreBytes", "lots");
            assertThrows(InvalidArgumentException.class, RendezvousOptions::fromEnvironment);
        } finally {
            props.keySet().forEach(System::clearProperty);
        }
        RendezvousOptions defaults = TestServers.serverOptions().build();
        assertEquals(256L << 20, defaults.maxStoreBytes());
        assertEquals(100_000, defaults.maxKeysPerClient());
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().maxStoreBytes(0));
        assertThrows(InvalidArgumentException.class, () -> RendezvousOptions.builder().maxKeysPerClient(0));
        assertFalse(defaults.toString().contains(TestServers.SECRET));
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
