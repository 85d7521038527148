package org.jccl.core.net;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** Leases on jccl-owned loops (started lazily, shared, stopped with the last lease) and on an application's group. */
class NetLoopsTest {
    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    /** Runs a task on the group and returns the name of the thread that ran it. */
    private static String runOn(EventLoopGroup group) throws Exception {
        return group.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
    }

    @Test
    void ownedLoopsStartAtTheFirstLeaseAreSharedAndStopWithTheLast() throws Exception {
        String name = "jccl-test-owned-a";
        OwnedLoops loops = (OwnedLoops) NetLoops.owned(name, 1);
        assertEquals(0, threadsNamed(name), "no thread before the first lease");

        NetLoops.Lease first = loops.lease();
        NetLoops.Lease second = loops.lease();
        assertSame(first.group(), second.group(), "every lease of one instance shares its threads");
        assertTrue(runOn(first.group()).startsWith(name + "-"));
        assertEquals(2, loops.leases());

        Future<?> notLast = first.release();
        assertTrue(notLast.isDone(), "releasing a lease that is not the last stops nothing");
        assertFalse(second.group().isShuttingDown());
        assertTrue(runOn(second.group()).startsWith(name + "-"));

        Future<?> last = second.release();
        assertTrue(last.await(10, TimeUnit.SECONDS), "the last release stops the threads");
        assertTrue(second.group().isTerminated());
        await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed(name) == 0);
        assertEquals(0, loops.leases());
    }

    @Test
    void aReleaseCountsOnceAndALaterLeaseStartsFreshThreads() throws Exception {
        OwnedLoops loops = (OwnedLoops) NetLoops.owned("jccl-test-owned-b", 2);
        NetLoops.Lease kept = loops.lease();
        NetLoops.Lease twice = loops.lease();
        twice.release();
        twice.release();
        twice.close();
        assertEquals(1, loops.leases(), "a lease given back three times counts once");
        assertFalse(kept.group().isShuttingDown());
        kept.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> kept.group().isTerminated());

        try (NetLoops.Lease again = loops.lease()) {
            assertNotSame(kept.group(), again.group());
            assertTrue(runOn(again.group()).startsWith("jccl-test-owned-b-"));
        }
    }

    @Test
    void anApplicationsGroupIsNeverShutDownByItsLeases() throws Exception {
        EventLoopGroup app = new NioEventLoopGroup(1, new DefaultThreadFactory("app-loops", true));
        try {
            NetLoops loops = NetLoops.of(app);
            NetLoops.Lease a = loops.lease();
            NetLoops.Lease b = loops.lease();
            assertSame(app, a.group());
            assertTrue(a.release().isDone());
            assertTrue(b.release().isDone());
            assertFalse(app.isShuttingDown());
            assertTrue(runOn(app).startsWith("app-loops"));
        } finally {
            app.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        assertThrows(IllegalStateException.class, () -> NetLoops.of(app).lease(),
                "a group the application shut down cannot be leased");
    }

    @Test
    void onlyNioGroupsAndSensibleSizesAreAccepted() {
        EventLoopGroup local = new DefaultEventLoopGroup(1);
        try {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> NetLoops.of(local));
            assertTrue(e.getMessage().contains("NIO"), e.getMessage());
        } finally {
            local.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        assertThrows(InvalidArgumentException.class, () -> NetLoops.owned("x", 0));
        assertThrows(InvalidArgumentException.class, () -> NetLoops.owned(" ", 1));
    }
}
