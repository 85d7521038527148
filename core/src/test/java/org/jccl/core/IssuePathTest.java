package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.engine.TestWorks;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InternalErrorException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.RemoteErrorException;
import org.junit.jupiter.api.Test;

/**
 * The issue path's promises on a scripted driver: a work that is refused, whose launch fails, or that an abort
 * overtook before its launch leaves no books and holds no memory; a group is one library group; a group over several
 * communicators is admitted on each, refused as a whole, launched only after each one's earlier operations, holds
 * the others' launch threads until it is launched, and joins the other streams before its event.
 */
class IssuePathTest extends ScriptedEngineFixture {
    private static Operation allReduce(Buffer b) {
        return Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
    }

    private static Work groupOver(List<Communicator> two, Buffer a, Buffer b) {
        return Group.create().add(two.get(0), allReduce(a)).add(two.get(1), allReduce(b)).submit();
    }

    private static long streamHandle(Communicator c) {
        return c.state().stream().driverStream().handle();
    }

    /** Closes the first buffer the test frees, now (not again in tear-down), and waits until its memory is freed. */
    private void closeAndAwaitFree(Buffer b) {
        buffers.remove(b);
        b.close();
        await().atMost(WAIT).until(() -> driver.freedBlocks.get() == 1);
    }

    /** Issues an all-reduce on {@code c} whose launch stays inside the library until the launch gate opens. */
    private Work stuckInLaunch(Communicator c, Buffer b) {
        driver.launchGate = new CountDownLatch(1);
        Work w = c.submit(allReduce(b));
        await().atMost(WAIT).until(() -> driver.launching.get() == 1);
        return w;
    }

    @Test
    void aWorkRefusedByAClosedCommunicatorHoldsNoMemory() {
        Communicator c = comm();
        c.closeAsync().join();
        Buffer b = buffer(64);
        Work w = c.submit(allReduce(b));
        Throwable e = assertThrows(CompletionException.class, w::join).getCause();
        assertInstanceOf(InvalidUsageException.class, e);
        closeAndAwaitFree(b);
    }

    @Test
    void aLaunchThatFailsFailsItsWorkLeavesNoBooksAndReleasesItsMemory() {
        Communicator c = comm();
        Buffer b = buffer(64);
        driver.launchFailure = new IllegalStateException("scripted launch failure");
        Work w = c.submit(allReduce(b));
        Throwable e = assertThrows(CompletionException.class, w::join).getCause();
        assertInstanceOf(JcclException.class, e);
        assertTrue(e.getMessage().contains("launch failed") && e.getMessage().contains("scripted launch failure"), e.getMessage());
        assertEquals(0, c.pendingCount());
        closeAndAwaitFree(b);

        driver.launchFailure = null;
        driver.autoComplete = true;
        c.submit(allReduce(buffer(64))).join(); // the communicator itself is not harmed
    }

    @Test
    void aLibraryErrorAtLaunchFailsTheWorkWithItsOwnType() {
        Communicator c = comm();
        Buffer b = buffer(64);
        driver.launchFailure = new InternalErrorException("scripted library error");
        Throwable e = assertThrows(CompletionException.class, () -> c.submit(allReduce(b)).join()).getCause();
        assertInstanceOf(InternalErrorException.class, e);
        assertTrue(e.getMessage().contains("scripted library error") && e.getMessage().contains("allReduce(seq=1"), e.getMessage());
        assertEquals(0, c.pendingCount());
        closeAndAwaitFree(b);
    }

    @Test
    void aWorkQueuedWhenItsCommunicatorAbortsIsNeverLaunchedAndReleasesItsMemory() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work stuck = stuckInLaunch(c, b);
        Work queued = c.submit(allReduce(b));
        c.abort();
        assertThrows(CompletionException.class, stuck::join);
        assertThrows(CompletionException.class, queued::join);
        driver.autoComplete = true; // the stuck launch records its event once it returns; it completes at once
        driver.launchGate.countDown();
        closeAndAwaitFree(b);
        assertEquals(1, driver.launched.size(), "only the launch already inside the library");
    }

    @Test
    void aStreamCopyThatFailsFailsItsWorkAndReleasesItsMemory() {
        Communicator c = comm();
        Buffer b = buffer(64);
        driver.launchFailure = new IllegalStateException("scripted copy failure");
        Throwable e = assertThrows(CompletionException.class, () -> c.stream().copy(b, b, 16).join()).getCause();
        assertInstanceOf(JcclException.class, e);
        assertTrue(e.getMessage().contains("copy(16 bytes)") && e.getMessage().contains("scripted copy failure"), e.getMessage());
        driver.launchFailure = new InternalErrorException("scripted runtime error");
        e = assertThrows(CompletionException.class, () -> c.stream().copy(b, b, 16).join()).getCause();
        assertInstanceOf(InternalErrorException.class, e, "a library error keeps its type");
        closeAndAwaitFree(b);
    }

    @Test
    void aCopyOnACommunicatorsStreamFollowsTheOperationsIssuedBeforeIt() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work stuck = stuckInLaunch(c, b);
        Work copy = c.stream().copy(b, b, 16);
        // Issued by the communicator's launch thread, behind the launch that has not returned: not recorded yet.
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> TestWorks.event(copy) == null);
        driver.autoComplete = true;
        driver.launchGate.countDown();
        stuck.join();
        copy.join();
    }

    @Test
    void aCopyOnAnApplicationsStreamIsEnqueuedByTheCaller() {
        Stream own = backend.createStream(-1);
        Buffer b = buffer(64);
        driver.autoComplete = true;
        Work copy = own.copy(b, b, 16);
        assertTrue(TestWorks.event(copy) != null, "recorded before copy() returned");
        assertEquals(own.queue().driverStream().handle(), driver.recordedOn.get(TestWorks.event(copy).handle()));
        copy.join();
        own.close();
    }

    @Test
    void severalOperationsLaunchAsOneLibraryGroupAndASingleOneWithout() {
        Communicator c = comm();
        Buffer b = buffer(64);
        driver.autoComplete = true;
        c.submit(allReduce(b)).join();
        assertEquals(0, driver.groupStarts.get(), "a single operation needs no group");
        c.submitGroup(List.of(allReduce(b), allReduce(b))).join();
        assertEquals(1, driver.groupStarts.get());
        assertEquals(1, driver.groupEnds.get());
        assertEquals(3, driver.launched.size());
    }

    @Test
    void aGroupOverTwoCommunicatorsIsPendingOnBothAndJoinsTheOtherStreamBeforeItsEvent() {
        List<Communicator> two = twoCommunicators();
        Work w = groupOver(two, buffer(64), buffer(64));
        long event = launchedHandle(w);
        assertEquals(1, two.get(0).pendingCount());
        assertEquals(1, two.get(1).pendingCount());
        // The second communicator's stream records a join event, the first stream waits for it, then records the work's.
        assertEquals(streamHandle(two.get(0)), driver.recordedOn.get(event));
        assertTrue(driver.recordedOn.entrySet().stream().anyMatch(r -> r.getValue() == streamHandle(two.get(1))
                        && Long.valueOf(streamHandle(two.get(0))).equals(driver.waitedOn.get(r.getKey()))),
                "recorded " + driver.recordedOn + ", waited " + driver.waitedOn);
        driver.done.add(event);
        await().atMost(WAIT).until(w::isDone);
        assertEquals(0, two.get(0).pendingCount() + two.get(1).pendingCount());
    }

    @Test
    void theJoinEventGoesBackToThePool() {
        List<Communicator> two = twoCommunicators();
        Buffer a = buffer(64);
        Buffer b = buffer(64);
        driver.autoComplete = true;
        for (int i = 0; i < 10; i++) groupOver(two, a, b).join();
        // One event serves every join and every work when each group completes before the next.
        assertEquals(1, driver.eventsCreated.get());
    }

    @Test
    void aGroupOverTwoCommunicatorsIsRefusedWholeWhenOneIsClosed() {
        List<Communicator> two = twoCommunicators();
        two.get(1).closeAsync().join();
        Buffer a = buffer(64);
        Work w = groupOver(two, a, buffer(64));
        Throwable e = assertThrows(CompletionException.class, w::join).getCause();
        assertInstanceOf(InvalidUsageException.class, e);
        assertEquals(0, two.get(0).pendingCount(), "the open communicator's admission is undone");
        assertEquals(0, driver.launched.size());
        closeAndAwaitFree(a);
    }

    @Test
    void aGroupOverTwoCommunicatorsLaunchesOnlyAfterEachOnesEarlierOperations() {
        List<Communicator> two = twoCommunicators();
        Buffer b = buffer(64);
        Work earlier = stuckInLaunch(two.get(1), b);
        Work group = groupOver(two, buffer(64), b);
        // The second communicator's launch thread is still inside its earlier launch: the group must not start.
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> driver.launching.get() == 1);
        driver.autoComplete = true;
        driver.launchGate.countDown();
        earlier.join();
        group.join();
        assertEquals(3, driver.launched.size());
    }

    @Test
    void aCommunicatorClaimedByAGroupLaunchesNothingElseUntilTheGroupIsLaunched() {
        List<Communicator> two = twoCommunicators();
        Buffer b = buffer(64);
        driver.launchGate = new CountDownLatch(1);
        Work group = groupOver(two, buffer(64), b);
        await().atMost(WAIT).until(() -> driver.launching.get() == 1); // the first communicator's thread launches it
        Work later = two.get(1).submit(allReduce(b));
        // The second communicator's launch thread is held by the group: its own next operation waits.
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> driver.launching.get() == 1);
        driver.autoComplete = true;
        driver.launchGate.countDown();
        group.join();
        later.join();
        assertEquals(3, driver.launched.size());
    }

    @Test
    void aCommunicatorThatForbidsQueriesDuringALaunchIsWatchedAgainOnceTheLaunchReturns() throws Exception {
        driver.asyncErrorUnsafeDuringLaunch = true;
        Communicator c = comm();
        Buffer b = buffer(64);
        Work first = c.submit(allReduce(b));
        driver.done.add(launchedHandle(first));
        first.join();
        Work second = c.submit(allReduce(b));
        launchedHandle(second);
        driver.asyncError = Errors.REMOTE_ERROR;
        Throwable e = assertThrows(ExecutionException.class, () -> second.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getCause();
        assertInstanceOf(RemoteErrorException.class, e);
    }
}
