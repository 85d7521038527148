package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.UniqueId;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** {@link Rendezvous}: rank 0 hosting the store, sharing unique ids, and options read from the environment. */
class RendezvousJoinTest {
    @Test
    void rankZeroHostsTheStoreAndSharesUniqueIds() throws Exception {
        int port = freePort();
        RendezvousOptions base = TestServers.serverOptions().port(port).worldSize(2).storeHost(StoreHost.RANK0).build();
        AtomicInteger made = new AtomicInteger();
        // Rank 1 may start first: it retries until rank 0's server listens.
        CompletableFuture<Rendezvous> rank1 = CompletableFuture.supplyAsync(
                () -> Rendezvous.join(base.toBuilder().rank(1).build()));
        Rendezvous rank0 = Rendezvous.join(base.toBuilder().rank(0).build());
        Rendezvous r1 = rank1.get(20, TimeUnit.SECONDS);
        try {
            CompletableFuture<List<UniqueId>> seen1 = r1.shareUniqueIds("ids", 2, () -> {
                throw new AssertionError("only rank 0 makes ids");
            });
            List<UniqueId> seen0 = rank0.shareUniqueIds("ids", 2,
                    () -> RendezvousStoreTest.uniqueId(made.incrementAndGet())).get(10, TimeUnit.SECONDS);
            assertEquals(seen0, seen1.get(10, TimeUnit.SECONDS));
            assertEquals(2, made.get());
            CompletableFuture<UniqueId> one0 = rank0.shareUniqueId("one", () -> RendezvousStoreTest.uniqueId(9));
            assertEquals(RendezvousStoreTest.uniqueId(9), r1.shareUniqueIdNow("one", () -> {
                throw new AssertionError("only rank 0 makes ids");
            }));
            assertEquals(RendezvousStoreTest.uniqueId(9), one0.get(10, TimeUnit.SECONDS));
            r1.client().barrier("end", 2);
            rank0.barrierNow("end");
        } finally {
            r1.close();
            rank0.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void joiningNeedsARankAndAWorldSize() {
        assertThrows(InvalidArgumentException.class, () -> Rendezvous.join(TestServers.serverOptions().build()));
    }

    @Test
    void optionsAreReadFromSystemPropertiesAndVariables() {
        Map<String, String> props = Map.of("jccl.masterAddr", "10.1.2.3", "jccl.masterPort", "31234", "jccl.rank", "2",
                "jccl.worldSize", "4", "jccl.localRank", "1", "jccl.rendezvous.secret", TestServers.SECRET,
                "jccl.rendezvous.server", "external", "jccl.rendezvous.deadAfter", "7s");
        props.forEach(System::setProperty);
        try {
            RendezvousOptions o = RendezvousOptions.fromEnvironment();
            assertEquals("10.1.2.3", o.host());
            assertEquals(31234, o.port());
            assertEquals(2, o.rank());
            assertEquals(4, o.worldSize());
            assertEquals(1, o.localRank());
            assertEquals(StoreHost.EXTERNAL, o.storeHost());
            assertEquals(Duration.ofSeconds(7), o.deadAfter());
            System.setProperty("jccl.rank", "two");
            assertThrows(InvalidArgumentException.class, RendezvousOptions::fromEnvironment);
        } finally {
            props.keySet().forEach(System::clearProperty);
        }
    }
}
