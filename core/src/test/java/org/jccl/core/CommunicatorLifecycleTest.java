package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.Test;

/**
 * A communicator's lifetime on the scripted driver, as the library sees it: what close and revoke call, that a
 * closed communicator refuses calls before anything is queued, and the order in which an abort or deadlines fail
 * pending work.
 */
class CommunicatorLifecycleTest extends ScriptedEngineFixture {
    /** Enough works that issue order cannot come out of a hash set's order by chance. */
    private static final int WORKS = 8;

    private List<Work> pendingWorks(Communicator c, List<Long> failedInOrder) {
        Buffer b = buffer(64);
        List<Work> works = new ArrayList<>();
        for (int i = 0; i < WORKS; i++) {
            Work w = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
            w.whenComplete((v, e) -> failedInOrder.add(w.sequence()));
            works.add(w);
        }
        return works;
    }

    private static List<Long> issueOrder() {
        List<Long> order = new ArrayList<>();
        for (long s = 1; s <= WORKS; s++) order.add(s);
        return order;
    }

    @Test
    void closeFinalizesThenDestroysAndStopsTheLaunchQueue() {
        Communicator c = comm();
        c.closeAsync().join();
        assertEquals(1, driver.finalized.get());
        assertEquals(1, driver.destroyed.get());
        // The launch thread stops right after the close task that completed the future.
        await().atMost(WAIT).until(() -> !c.state().launchQueue().submit(() -> { }));
    }

    @Test
    void aRevokedCommunicatorIsDestroyedWithoutFinalizeWhenClosed() {
        driver.functions = Set.of(Feature.COMM_REVOKE.function());
        Communicator c = comm();
        c.revoke().join();
        assertEquals(1, driver.revoked.get());
        c.closeAsync().join();
        assertEquals(0, driver.finalized.get(), "NCCL does not accept finalize after a revoke");
        assertEquals(1, driver.destroyed.get());
    }

    @Test
    void aClosedCommunicatorRefusesCallsBeforeQueueingThem() {
        driver.functions = Set.of(Feature.COMM_REVOKE.function());
        Communicator c = comm();
        c.closeAsync().join();
        assertThrows(InvalidUsageException.class, () -> c.split(0, 0));
        assertThrows(InvalidUsageException.class, c::revoke);
        assertEquals(0, driver.revoked.get());
    }

    @Test
    void anAbortFailsPendingWorksInIssueOrder() {
        Communicator c = comm();
        List<Long> failed = new CopyOnWriteArrayList<>();
        List<Work> works = pendingWorks(c, failed);
        for (Work w : works) launchedHandle(w);
        c.abort();
        await().atMost(WAIT).until(() -> failed.size() == WORKS);
        assertEquals(issueOrder(), failed);
    }

    @Test
    void lateWorksTimeOutOldestFirst() {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(50)).withTimeoutPolicy(TimeoutPolicy.REPORT));
        List<Long> failed = new CopyOnWriteArrayList<>();
        List<Work> works = pendingWorks(c, failed);
        await().atMost(WAIT).until(() -> failed.size() == WORKS);
        assertEquals(issueOrder(), failed);
        for (Work w : works) {
            assertInstanceOf(WorkTimeoutException.class, assertThrows(CompletionException.class, w::join).getCause());
        }
    }

    @Test
    void withTheAbortPolicyOnlyTheOldestLateWorkTimesOutAndTheAbortFailsTheRest() {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(50)).withTimeoutPolicy(TimeoutPolicy.ABORT_COMMUNICATOR));
        List<Long> failed = new CopyOnWriteArrayList<>();
        List<Work> works = pendingWorks(c, failed);
        await().atMost(WAIT).until(() -> failed.size() == WORKS);
        assertInstanceOf(WorkTimeoutException.class, assertThrows(CompletionException.class, works.get(0)::join).getCause());
        for (Work w : works.subList(1, WORKS)) {
            assertInstanceOf(CommunicatorAbortedException.class, assertThrows(CompletionException.class, w::join).getCause());
        }
    }
}
