package org.jccl.core.rendezvous;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.net.NetLoops;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which threads servers and clients run on: the shared default, released when unused, or an application's group. */
class RendezvousLoopsTest {
    private EventLoopGroup app;

    @BeforeEach
    void startApplicationGroup() {
        app = new NioEventLoopGroup(2, new DefaultThreadFactory("app-net", true));
    }

    @AfterEach
    void stopApplicationGroup() {
        app.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void serverAndClientsRunOnAnInjectedGroupThatOutlivesThem() throws Exception {
        NetLoops loops = NetLoops.of(app);
        for (int round = 0; round < 2; round++) {
            try (RendezvousServer server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(2).loops(loops).build());
                 RendezvousClient a = RendezvousClient.connectNow(TestServers.clientOptions(server, 0, 2).toBuilder().loops(loops).build());
                 RendezvousClient b = RendezvousClient.connectNow(TestServers.clientOptions(server, 1, 2).toBuilder().loops(loops).build())) {
                a.setNow("k", new byte[] {(byte) round});
                assertArrayEquals(new byte[] {(byte) round}, b.getNow("k", Duration.ofSeconds(5)));
                assertTrue(threadsNamed("app-net") > 0, "the application's threads carry the connections");
                assertEquals(0, threadsNamed("jccl-rendezvous-net"), "jccl started no event loop of its own");
            }
            // jccl gave the group back without shutting it down: it still runs tasks, and the next round.
            assertFalse(app.isShuttingDown());
            assertEquals("ok", app.submit(() -> "ok").get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void theSharedDefaultServesEveryoneOnOneThreadAndStopsWhenUnused() {
        List<AutoCloseable> open = new ArrayList<>();
        try (RendezvousServer server = RendezvousServer.bindNow(TestServers.serverOptions().worldSize(3).build())) {
            for (int r = 0; r < 3; r++) {
                RendezvousClient c = TestServers.connect(server, r, 3);
                open.add(c);
                c.setNow("r" + r, new byte[] {(byte) r});
            }
            assertEquals(1, threadsNamed("jccl-rendezvous-net"), "one server and three clients share one loop thread");
            open.forEach(c -> ((RendezvousClient) c).close());
        }
        // Event loops and callback threads alike end once the last user closed.
        await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("jccl-rendezvous") == 0);
    }

    @Test
    void closingTheServerOnASharedGroupClosesEveryConnectionAndTellsMembersWhy() throws Exception {
        // A handshake timeout longer than the raw peers' 10 s read timeout: only the server's close can end them.
        RendezvousOptions options = TestServers.serverOptions().worldSize(4).handshakeTimeout(Duration.ofSeconds(60))
                .loops(NetLoops.of(app)).build();
        RendezvousServer server = RendezvousServer.bindNow(options);
        try (server;
             RawPeer member = new RawPeer(server.address());
             RawPeer stranger = new RawPeer(server.address());
             RendezvousClient client = RendezvousClient.connectNow(TestServers.clientOptions(server, 2, 4).toBuilder()
                     .loops(NetLoops.of(app)).build())) {
            assertEquals(MessageType.JOINED, member.join(TestServers.SECRET_BYTES, 1, 4).type());
            stranger.expect(MessageType.CHALLENGE);
            CompletableFuture<byte[]> pending = client.get("never", Duration.ofSeconds(30));
            client.tryGetNow("probe"); // the get has reached the server

            server.close();

            Frame why = member.expect(MessageType.ERROR);
            assertEquals(ErrorCode.SHUTTING_DOWN.code, new PayloadReader(why.payload()).u16());
            assertTrue(member.closedByServer());
            assertTrue(stranger.closedByServer(), "an unauthenticated connection is closed too, without a word");
            Throwable failed = assertThrows(ExecutionException.class, () -> pending.get(10, TimeUnit.SECONDS)).getCause();
            assertInstanceOf(RendezvousException.class, failed);
            assertTrue(failed.getMessage().contains("closing"), failed.getMessage());
        }
        assertFalse(app.isShuttingDown());
    }
}
