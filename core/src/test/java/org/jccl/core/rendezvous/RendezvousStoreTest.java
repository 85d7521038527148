package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.UniqueId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RendezvousStoreTest {
    private static final int WORLD = 3;
    private static final Duration SHORT = Duration.ofMillis(300);

    private RendezvousServer server;
    private final List<RendezvousClient> clients = new ArrayList<>();

    @BeforeEach
    void start() {
        server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(WORLD).build());
        for (int r = 0; r < WORLD; r++) clients.add(TestServers.connect(server, r, WORLD));
    }

    @AfterEach
    void stop() {
        clients.forEach(RendezvousClient::close);
        server.close();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void setThenGetFromAnotherClient() {
        clients.get(0).setNow("a", utf8("one"));
        assertArrayEquals(utf8("one"), clients.get(1).getNow("a", SHORT));
        clients.get(2).setNow("a", utf8("two"));
        assertArrayEquals(utf8("two"), clients.get(0).getNow("a", SHORT));
    }

    @Test
    void getWaitsForALaterSet() throws Exception {
        CompletableFuture<byte[]> pending = clients.get(1).get("later", Duration.ofSeconds(10));
        assertFalse(pending.isDone());
        clients.get(0).setNow("later", utf8("now"));
        assertArrayEquals(utf8("now"), pending.get(10, TimeUnit.SECONDS));
    }

    @Test
    void hugeTimeoutsAreAccepted() throws Exception {
        CompletableFuture<byte[]> pending = clients.get(1).get("patient", Duration.ofDays(1_000_000));
        clients.get(0).setNow("patient", utf8("worth it"));
        assertArrayEquals(utf8("worth it"), pending.get(10, TimeUnit.SECONDS));
    }

    @Test
    void getTimesOutWhenNobodySets() {
        RendezvousTimeoutException e = assertThrows(RendezvousTimeoutException.class,
                () -> clients.get(0).getNow("never", SHORT));
        assertTrue(e.getMessage().contains("never"), e.getMessage());
        assertEquals(ErrorCode.TIMEOUT, e.errorCode());
    }

    @Test
    void tryGetDoesNotWait() {
        assertEquals(Optional.empty(), clients.get(0).tryGetNow("absent"));
        clients.get(1).setNow("present", new byte[0]);
        assertArrayEquals(new byte[0], clients.get(0).tryGetNow("present").orElseThrow());
    }

    @Test
    void waitForCompletesOnlyWhenEveryKeyIsSet() throws Exception {
        CompletableFuture<Void> all = clients.get(0).waitFor(List.of("k1", "k2", "k3"), Duration.ofSeconds(10));
        clients.get(1).setNow("k1", utf8("x"));
        clients.get(2).setNow("k2", utf8("y"));
        // k3 is still missing: a zero-cost probe of another key orders this check after the two sets.
        clients.get(0).tryGetNow("k1");
        assertFalse(all.isDone());
        clients.get(1).setNow("k3", utf8("z"));
        all.get(10, TimeUnit.SECONDS);
    }

    @Test
    void waitForTimesOut() {
        assertThrows(RendezvousTimeoutException.class, () -> clients.get(0).waitForNow(List.of("missing"), SHORT));
    }

    @Test
    void addIsAtomicAcrossClients() throws Exception {
        List<CompletableFuture<Long>> results = new ArrayList<>();
        for (int i = 0; i < 100; i++) results.add(clients.get(i % WORLD).add("counter", 1));
        List<Long> values = new ArrayList<>();
        for (CompletableFuture<Long> f : results) values.add(f.get(10, TimeUnit.SECONDS));
        assertEquals(100, new HashSet<>(values).size(), "every add saw a distinct value: " + values);
        assertTrue(values.stream().allMatch(v -> v >= 1 && v <= 100), values::toString);
        assertEquals(100, clients.get(0).addNow("counter", 0));
        assertEquals("100", new String(clients.get(1).getNow("counter", SHORT), StandardCharsets.US_ASCII));
        assertEquals(90, clients.get(2).addNow("counter", -10));
    }

    @Test
    void addOnANonCounterIsRefusedAndChangesNothing() {
        clients.get(0).setNow("text", utf8("hello"));
        RendezvousException e = assertThrows(RendezvousException.class, () -> clients.get(1).addNow("text", 1));
        assertEquals(ErrorCode.BAD_REQUEST, e.errorCode());
        assertArrayEquals(utf8("hello"), clients.get(2).getNow("text", SHORT));
        assertTrue(clients.get(1).isConnected(), "a refused request keeps the connection");
    }

    @Test
    void compareAndSetSwapsOnlyOnMatch() {
        RendezvousClient c = clients.get(0);
        assertTrue(c.compareAndSetNow("leader", null, utf8("rank0")), "absent: the first claim wins");
        assertFalse(clients.get(1).compareAndSetNow("leader", null, utf8("rank1")), "present: a second claim loses");
        assertFalse(c.compareAndSetNow("leader", utf8("wrong"), utf8("x")));
        assertArrayEquals(utf8("rank0"), c.getNow("leader", SHORT));
        assertTrue(clients.get(2).compareAndSetNow("leader", utf8("rank0"), utf8("rank2")));
        assertArrayEquals(utf8("rank2"), c.getNow("leader", SHORT));
    }

    @Test
    void compareAndSetWakesWaiters() throws Exception {
        CompletableFuture<byte[]> waiting = clients.get(1).get("cas-key", Duration.ofSeconds(10));
        assertTrue(clients.get(0).compareAndSetNow("cas-key", null, utf8("v")));
        assertArrayEquals(utf8("v"), waiting.get(10, TimeUnit.SECONDS));
    }

    @Test
    void deleteRemovesAKey() {
        clients.get(0).setNow("gone", utf8("x"));
        assertTrue(clients.get(1).deleteNow("gone"));
        assertFalse(clients.get(1).deleteNow("gone"));
        assertEquals(Optional.empty(), clients.get(2).tryGetNow("gone"));
    }

    @Test
    void barrierReleasesEveryoneOnlyWhenAllArrive() throws Exception {
        CompletableFuture<Void> b0 = clients.get(0).barrier("start", WORLD, Duration.ofSeconds(10));
        CompletableFuture<Void> b1 = clients.get(1).barrier("start", WORLD, Duration.ofSeconds(10));
        clients.get(0).tryGetNow("probe"); // orders the check after both arrivals reached the server
        assertFalse(b0.isDone());
        assertFalse(b1.isDone());
        clients.get(2).barrierNow("start", WORLD, Duration.ofSeconds(10));
        b0.get(10, TimeUnit.SECONDS);
        b1.get(10, TimeUnit.SECONDS);
        // The name can be used again for a second round.
        CompletableFuture<?>[] second = new CompletableFuture<?>[WORLD];
        for (int r = 0; r < WORLD; r++) second[r] = clients.get(r).barrier("start", WORLD, Duration.ofSeconds(10));
        CompletableFuture.allOf(second).get(10, TimeUnit.SECONDS);
    }

    @Test
    void barrierTimeoutWithdrawsTheArrival() throws Exception {
        assertThrows(RendezvousTimeoutException.class, () -> clients.get(0).barrierNow("b", 2, SHORT));
        // Had the timed-out arrival been kept, this single arrival would complete the barrier.
        CompletableFuture<Void> one = clients.get(1).barrier("b", 2, Duration.ofSeconds(10));
        clients.get(1).tryGetNow("probe");
        assertFalse(one.isDone());
        clients.get(2).barrierNow("b", 2, Duration.ofSeconds(10));
        one.get(10, TimeUnit.SECONDS);
    }

    @Test
    void barrierSizesMustAgree() {
        CompletableFuture<Void> first = clients.get(0).barrier("sized", 3, Duration.ofSeconds(10));
        CompletableFuture<Void> second = clients.get(1).barrier("sized", 2, Duration.ofSeconds(10));
        // Whichever reaches the server second disagrees with the size the other set: it is refused, the other waits.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> first.isDone() || second.isDone());
        CompletableFuture<Void> refused = first.isDone() ? first : second;
        CompletableFuture<Void> waiting = refused == first ? second : first;
        Throwable cause = assertThrows(java.util.concurrent.ExecutionException.class, refused::get).getCause();
        RendezvousException e = org.junit.jupiter.api.Assertions.assertInstanceOf(RendezvousException.class, cause);
        assertEquals(ErrorCode.BAD_REQUEST, e.errorCode());
        assertFalse(waiting.isDone());
    }

    @Test
    void stringsAndUniqueIdsRoundTrip() throws Exception {
        clients.get(0).setString("addr/0", "10.0.0.1:4242").get(10, TimeUnit.SECONDS);
        assertEquals("10.0.0.1:4242", clients.get(1).getString("addr/0", SHORT).get(10, TimeUnit.SECONDS));

        UniqueId a = uniqueId(1);
        UniqueId b = uniqueId(2);
        clients.get(0).setUniqueId("id", a).get(10, TimeUnit.SECONDS);
        assertEquals(a, clients.get(2).getUniqueId("id", SHORT).get(10, TimeUnit.SECONDS));
        clients.get(0).setUniqueIds("ids", List.of(a, b)).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(a, b), clients.get(1).getUniqueIds("ids", SHORT).get(10, TimeUnit.SECONDS));
    }

    @Test
    void completionsRunOffNettyThreads() throws Exception {
        // The stage is attached before the key exists, so it runs on the thread that completes the future
        // (attached after completion, it would run on the caller's).
        CompletableFuture<String> threadOfCompletion = clients.get(1).get("t", SHORT).thenApply(v -> Thread.currentThread().getName());
        clients.get(0).setNow("t", utf8("x"));
        String thread = threadOfCompletion.get(10, TimeUnit.SECONDS);
        assertTrue(thread.startsWith("jccl-rendezvous-callbacks"), thread);
        String failureThread = clients.get(1).get("absent", SHORT)
                .handle((v, t) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
        assertTrue(failureThread.startsWith("jccl-rendezvous-callbacks"), failureThread);
    }

    @Test
    void valuesOfAFewHundredBytesPerRankFit() {
        byte[] addresses = new byte[512];
        for (int i = 0; i < addresses.length; i++) addresses[i] = (byte) i;
        for (int r = 0; r < WORLD; r++) clients.get(r).setNow("addr/" + r, addresses);
        for (int r = 0; r < WORLD; r++) assertArrayEquals(addresses, clients.get(0).getNow("addr/" + r, SHORT));
    }

    static UniqueId uniqueId(int seed) {
        byte[] b = new byte[UniqueId.BYTES];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (seed * 31 + i);
        return UniqueId.fromBytes(b);
    }
}
