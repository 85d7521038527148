package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.host.HostTesting.floats;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.net.HostBackendLoops;
import org.jccl.core.net.NetLoops;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The host transport's event loops: jccl's own threads stop when unused; an application's group is used, not stopped. */
class HostNetworkLoopsTest {
    private EventLoopGroup app;

    @BeforeEach
    void nothingRunsYet() {
        app = new NioEventLoopGroup(2, new DefaultThreadFactory("app-host-net", true));
        // Ids that earlier tests made and never used keep their roots open for the init timeout: expire them. Their
        // communicators are closed, so the transport then stops (a leaked clique would show here).
        BootstrapRoot.expireAll();
        await().atMost(Duration.ofSeconds(10)).until(() -> HostNetwork.users() == 0 && threadsNamed("jccl-host-net") == 0);
    }

    @AfterEach
    void restoreTheDefault() {
        HostBackendLoops.use(HostBackendLoops.DEFAULT);
        app.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    /** Two ranks over TCP in this JVM, one all-reduce checked, everything closed again. */
    private static void formReduceAndClose(Runnable whileOpen) throws Exception {
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < 2; r++) joining.add(host().initRank(id, 2, r, -1));
        List<Communicator> comms = new ArrayList<>();
        List<Buffer> buffers = new ArrayList<>();
        try {
            for (CompletableFuture<Communicator> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
            List<Work> works = new ArrayList<>();
            for (Communicator c : comms) {
                Buffer b = floats(1 + c.rank(), 10);
                buffers.add(b);
                works.add(c.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
            }
            for (Work w : works) w.get(30, TimeUnit.SECONDS);
            for (Buffer b : buffers) assertArrayEquals(new float[] {3f, 20f}, read(b));
            whileOpen.run();
        } finally {
            for (Communicator c : comms) c.close();
            for (Buffer b : buffers) b.close();
        }
    }

    @Test
    void jcclsOwnThreadsRunTheTransportAndStopWhenTheLastCommunicatorCloses() throws Exception {
        formReduceAndClose(() -> {
            assertTrue(HostNetwork.users() > 0);
            assertTrue(threadsNamed("jccl-host-net") > 0);
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> HostNetwork.users() == 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("jccl-host-net") == 0);
    }

    /** Two ranks over TCP made at the driver level, so the test reaches their connections. */
    private static List<HostComm> driverRanks() throws Exception {
        HostDriver driver = new HostDriver();
        byte[] id = driver.newNetworkUniqueId();
        List<CompletableFuture<HostComm>> joining = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int rank = r;
            joining.add(CompletableFuture.supplyAsync(() -> (HostComm) driver.initRank(2, id, rank, -1, CommConfig.DEFAULT)));
        }
        List<HostComm> comms = new ArrayList<>();
        for (CompletableFuture<HostComm> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        return comms;
    }

    private static EventLoopGroup groupOf(HostComm comm, int peer) {
        Channel ch = ((NetworkClique) comm.transport()).channelTo(peer);
        assertNotNull(ch);
        return (EventLoopGroup) ch.eventLoop().parent();
    }

    @Test
    void anApplicationsGroupCarriesTheTransportAndOutlivesIt() throws Exception {
        HostBackendLoops.use(NetLoops.of(app));
        List<HostComm> comms = driverRanks();
        try {
            assertSame(app, groupOf(comms.get(0), 1), "rank 0's connection runs on the application's group");
            assertSame(app, groupOf(comms.get(1), 0));
            assertEquals(0, threadsNamed("jccl-host-net"), "jccl started no event loop of its own");
        } finally {
            for (HostComm c : comms) c.destroy();
        }
        // And a whole communicator through the public API, twice: the group outlives each.
        for (int round = 0; round < 2; round++) {
            formReduceAndClose(() -> assertEquals(0, threadsNamed("jccl-host-net")));
            await().atMost(Duration.ofSeconds(10)).until(() -> HostNetwork.users() == 0);
            assertFalse(app.isShuttingDown(), "jccl never shuts down a group it did not create");
            assertEquals("ok", app.submit(() -> "ok").get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void changingLoopsWhileInUseMovesNewCliquesAndStopsNothingInUse() throws Exception {
        // A root on jccl's own threads stays open (an id made and not used yet).
        BootstrapRoot held = BootstrapRoot.find(HostUniqueId.decode(new HostDriver().newNetworkUniqueId()));
        assertNotNull(held);
        EventLoopGroup ownGroup = HostNetwork.acquire();
        HostNetwork.release();
        assertTrue(threadsNamed("jccl-host-net") > 0);

        HostBackendLoops.use(NetLoops.of(app));
        List<HostComm> comms = driverRanks();
        try {
            assertSame(app, groupOf(comms.get(0), 1), "opened after the change: on the application's group");
        } finally {
            for (HostComm c : comms) c.destroy();
        }
        assertFalse(ownGroup.isShuttingDown(), "the held root's threads keep running");

        held.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> HostNetwork.users() == 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("jccl-host-net") == 0);
        assertFalse(app.isShuttingDown());
    }
}
