package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.engine.TestWorks;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InternalErrorException;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The engine's contract, on a driver whose events complete when the test says so. */
class EngineTest extends ScriptedEngineFixture {
    private Work allReduce(Communicator c, Buffer b) {
        return c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
    }

    @Test
    void worksCompleteInStreamOrderAndOnlyTheOldestEventIsPolled() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w1 = allReduce(c, b);
        Work w2 = allReduce(c, b);
        Work w3 = allReduce(c, b);
        long h1 = launchedHandle(w1);
        long h2 = launchedHandle(w2);
        long h3 = launchedHandle(w3);
        driver.done.add(h3);
        await().atMost(WAIT).until(() -> driver.queried.contains(h1));
        assertFalse(w1.isDone() || w2.isDone() || w3.isDone(), "nothing completes before the oldest event");
        driver.done.add(h1);
        await().atMost(WAIT).until(w1::isDone);
        assertFalse(w2.isDone(), "w2's event is still pending");
        driver.done.add(h2);
        await().atMost(WAIT).until(() -> w2.isDone() && w3.isDone());
        assertTrue(driver.queried.indexOf(h1) < driver.queried.indexOf(h2));
        assertFalse(driver.queried.subList(0, driver.queried.indexOf(h2)).contains(h3),
                "h3 is never queried while an older event of its stream is pending");
        assertEquals(List.of(1L, 2L, 3L), List.of(w1.sequence(), w2.sequence(), w3.sequence()));
        assertTrue(w3.describe().contains("allReduce(seq=3, count=4, float32, sum, in-place)"), w3.describe());
    }

    @Test
    void theHeadsOfAllStreamsArePolledInOneCall() {
        List<Work> works = new ArrayList<>();
        for (int i = 0; i < 3; i++) works.add(allReduce(comm(), buffer(64)));
        for (Work w : works) launchedHandle(w);
        await().atMost(WAIT).until(() -> driver.largestPoll.get() == 3);
        for (Work w : works) driver.done.add(TestWorks.event(w).handle());
        await().atMost(WAIT).until(() -> works.stream().allMatch(Work::isDone));
    }

    @Test
    void theEventThreadParksWhenIdleAndWakesForNewWork() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w = allReduce(c, b);
        driver.done.add(launchedHandle(w));
        await().atMost(WAIT).until(w::isDone);
        await().atMost(WAIT).until(() -> backend.eventThread().getState() == Thread.State.WAITING);
        Work next = allReduce(c, b);
        long h = launchedHandle(next);
        await().atMost(WAIT).until(() -> driver.queried.contains(h));
        driver.done.add(h);
        await().atMost(WAIT).until(next::isDone);
    }

    @Test
    void aReportedTimeoutFailsOnlyThatWorkAndKeepsItsMemoryUntilTheEventCompletes() {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(50)).withTimeoutPolicy(TimeoutPolicy.REPORT));
        Buffer b = backend.allocate(-1, 64);
        Work w = allReduce(c, b);
        b.close();
        long h = launchedHandle(w);
        CompletionException e = assertThrows(CompletionException.class, () -> w.join());
        assertInstanceOf(WorkTimeoutException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("allReduce(seq=1, count=4, float32"), e.getCause().getMessage());
        assertTrue(c.isOpen());
        assertEquals(0, driver.freedBlocks.get(), "the GPU may still use the memory");
        driver.done.add(h);
        await().atMost(WAIT).until(() -> driver.freedBlocks.get() == 1);
    }

    @Test
    void everyLateWorkTimesOutEvenBehindAStuckOneAndNamesItsOwnTimeout() {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMinutes(5)).withTimeoutPolicy(TimeoutPolicy.REPORT));
        Buffer b = buffer(64);
        Work stuck = c.submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMillis(40));
        Work behind = c.submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMillis(60));
        Throwable first = assertThrows(CompletionException.class, stuck::join).getCause();
        Throwable second = assertThrows(CompletionException.class, behind::join).getCause();
        assertInstanceOf(WorkTimeoutException.class, first);
        assertInstanceOf(WorkTimeoutException.class, second);
        assertTrue(first.getMessage().contains("still pending after PT0.04S"), first.getMessage());
        assertTrue(second.getMessage().contains("allReduce(seq=2") && second.getMessage().contains("PT0.06S"), second.getMessage());
    }

    @Test
    void aWorkWhoseLaunchIsStuckInTheLibraryStillTimesOut() throws Exception {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(100)).withTimeoutPolicy(TimeoutPolicy.REPORT));
        Buffer b = buffer(64);
        driver.launchGate = new java.util.concurrent.CountDownLatch(1);
        // The event thread is asleep with nothing pending, as on a GPU machine between jobs.
        await().atMost(WAIT).until(() -> backend.eventThread().getState() == Thread.State.WAITING);
        Work w = allReduce(c, b);
        // Nothing is ever recorded, no stream becomes active: admitting the work must wake it for the deadline.
        Throwable e = assertThrows(java.util.concurrent.ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(WorkTimeoutException.class, e);
        assertTrue(TestWorks.event(w) == null, "the launch is still stuck");
        driver.autoComplete = true; // before the gate opens: the released launch records an event that must complete
        driver.launchGate.countDown();
        await().atMost(WAIT).until(() -> driver.launched.size() == 1);
        // The communicator stays usable; this work gets a timeout that a loaded CI machine cannot hit.
        Work next = c.submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMinutes(1));
        next.get(10, TimeUnit.SECONDS);
    }

    @Test
    void anAsyncErrorIsSeenWhileALaunchIsStuckWhereTheLibraryAllowsTheQuery() throws Exception {
        Communicator c = comm(CommOptions.defaults());
        Buffer b = buffer(64);
        driver.launchGate = new java.util.concurrent.CountDownLatch(1);
        Work w = allReduce(c, b);
        await().atMost(WAIT).until(() -> driver.launching.get() == 1);
        // A peer fails while the first collective waits for it: the error aborts the communicator, which fails the work.
        driver.asyncError = Errors.REMOTE_ERROR;
        Throwable e = assertThrows(java.util.concurrent.ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(RemoteErrorException.class, e);
        assertTrue(driver.asyncErrorQueriesDuringLaunch.get() > 0);
        driver.launchGate.countDown();
    }

    @Test
    void noAsyncErrorQueryWhileALaunchIsInsideALibraryThatForbidsIt() {
        driver.asyncErrorUnsafeDuringLaunch = true;
        Communicator c = comm(CommOptions.defaults());
        Buffer b = buffer(64);
        driver.launchGate = new java.util.concurrent.CountDownLatch(1);
        Work w = allReduce(c, b);
        await().atMost(WAIT).until(() -> driver.launching.get() == 1);
        // The work is pending, so the event thread checks the communicator every millisecond: none may reach the library.
        await().during(Duration.ofMillis(100)).atMost(WAIT).until(() -> driver.asyncErrorQueriesDuringLaunch.get() == 0);
        driver.autoComplete = true;
        driver.launchGate.countDown();
        w.join();
    }

    @Test
    void aTimeoutWithTheAbortPolicyAbortsTheCommunicator() {
        Communicator c = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(50)));
        Buffer b = buffer(64);
        Work first = allReduce(c, b);
        Work second = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
        CompletionException e = assertThrows(CompletionException.class, first::join);
        assertInstanceOf(WorkTimeoutException.class, e.getCause());
        CompletionException e2 = assertThrows(CompletionException.class, second::join);
        assertInstanceOf(CommunicatorAbortedException.class, e2.getCause());
        await().atMost(WAIT).until(() -> driver.abortCalled);
        Work later = allReduce(c, b);
        assertInstanceOf(CommunicatorAbortedException.class, assertThrows(CompletionException.class, later::join).getCause());
    }

    @Test
    void theFirstAsyncErrorFailsEveryPendingAndLaterWorkWithItsType() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w1 = allReduce(c, b);
        Work w2 = allReduce(c, b);
        launchedHandle(w2);
        driver.asyncError = Errors.REMOTE_ERROR;
        for (Work w : List.of(w1, w2)) {
            Throwable cause = assertThrows(CompletionException.class, w::join).getCause();
            assertInstanceOf(RemoteErrorException.class, cause);
            assertTrue(cause.getMessage().startsWith(c.describe()), cause.getMessage());
        }
        await().atMost(WAIT).until(() -> driver.abortCalled);
        assertInstanceOf(RemoteErrorException.class, assertThrows(CompletionException.class, () -> allReduce(c, b).join()).getCause());
    }

    @Test
    void aCompletedEventIsNoSuccessWhenTheCommunicatorReportsAnError() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w = allReduce(c, b);
        long h = launchedHandle(w);
        driver.asyncError = Errors.INTERNAL_ERROR;
        driver.done.add(h);
        assertInstanceOf(InternalErrorException.class, assertThrows(CompletionException.class, w::join).getCause());
    }

    @Test
    void closingABufferWithPendingWorkDefersTheFree() {
        Communicator c = comm();
        Buffer b = backend.allocate(-1, 64);
        Work w = allReduce(c, b);
        b.close();
        assertTrue(b.isClosed());
        long h = launchedHandle(w);
        assertEquals(0, driver.freedBlocks.get());
        driver.done.add(h);
        await().atMost(WAIT).until(() -> driver.freedBlocks.get() == 1);
        assertTrue(w.isDone() && !w.isCompletedExceptionally());
    }

    @Test
    void onlyJcclCompletesAWork() throws Exception {
        Communicator c = comm();
        Work w = allReduce(c, buffer(64));
        assertThrows(UnsupportedOperationException.class, () -> w.complete(null));
        assertThrows(UnsupportedOperationException.class, () -> w.completeExceptionally(new RuntimeException()));
        assertThrows(UnsupportedOperationException.class, () -> w.orTimeout(1, TimeUnit.SECONDS));
        assertFalse(w.cancel(true));
        assertFalse(w.isDone());
        driver.done.add(launchedHandle(w));
        w.get(10, TimeUnit.SECONDS);
    }

    @Test
    void onTheEventThreadWaitingForPendingWorkFailsFastAndFinishedWorkIsReturned() throws Exception {
        Communicator c = comm();
        Work first = allReduce(c, buffer(64));
        Work second = allReduce(c, buffer(64));
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        first.thenRun(() -> {
            // On the event thread: the work that completed may be read, the pending one may not be waited for.
            first.join();
            seen.add("first joined");
            try {
                first.get();
                first.get(1, TimeUnit.SECONDS);
                seen.add("first read");
            } catch (Exception e) {
                seen.add("first: " + e);
            }
            Executable[] waits = {second::join, second::get, () -> second.get(1, TimeUnit.SECONDS)};
            for (Executable wait : waits) {
                try {
                    wait.execute();
                    seen.add("second waited");
                } catch (IllegalStateException e) {
                    seen.add("refused");
                } catch (Throwable e) {
                    seen.add("second: " + e);
                }
            }
        });
        driver.done.add(launchedHandle(first));
        await().atMost(WAIT).until(() -> seen.size() == 5);
        assertEquals(List.of("first joined", "first read", "refused", "refused", "refused"), seen);
        assertFalse(second.isDone());
        driver.done.add(launchedHandle(second));
        second.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aCompletedWorksEventIsReusedByTheNextWork() {
        Communicator c = comm();
        Work first = allReduce(c, buffer(64));
        driver.done.add(launchedHandle(first));
        assertEquals(c.device(), TestWorks.event(first).device(), "the event is on the stream's device");
        first.join();
        Work second = allReduce(c, buffer(64));
        driver.done.add(launchedHandle(second));
        assertSame(TestWorks.event(first), TestWorks.event(second), "the event went back to the stream's pool");
        second.join();
    }

    @Test
    void aWorkNamesItsCommunicatorAndItsState() {
        Communicator c = comm();
        Work done = allReduce(c, buffer(64));
        assertSame(c, done.communicator());
        assertTrue(done.toString().startsWith(c.describe() + " allReduce(seq=1"), done.toString());
        assertTrue(done.toString().endsWith("[pending]"), done.toString());
        driver.done.add(launchedHandle(done));
        done.join();
        assertTrue(done.toString().endsWith("[done]"), done.toString());
        Communicator impatient = comm(CommOptions.defaults().withTimeout(Duration.ofMillis(50)).withTimeoutPolicy(TimeoutPolicy.REPORT));
        Work late = allReduce(impatient, buffer(64));
        assertThrows(CompletionException.class, late::join);
        assertTrue(late.toString().endsWith("[failed]"), late.toString());
        driver.done.add(launchedHandle(late));
    }

    @Test
    void aTimeoutTooLargeForNanosecondsMeansNoDeadlineAndTheWorkStillCompletes() throws Exception {
        assertEquals(Long.MAX_VALUE, Work.nanos(Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals(Long.MAX_VALUE, Work.nanos(Duration.ofNanos(Long.MAX_VALUE)));
        assertEquals(1_500_000, Work.nanos(Duration.ofNanos(1_500_000)));
        assertEquals(0, Work.nanos(Duration.ZERO));
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w = c.submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofSeconds(Long.MAX_VALUE));
        driver.done.add(launchedHandle(w));
        w.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aGroupOverTwoCommunicatorsIsOneWork() {
        List<Communicator> two = twoCommunicators();
        Buffer a = buffer(64);
        Buffer b = buffer(64);
        Work w = Group.create()
                .add(two.get(0), Operation.allReduce(a, a, 4, DataType.FLOAT32, ReduceOp.SUM))
                .add(two.get(1), Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM))
                .submit();
        await().atMost(WAIT).until(() -> driver.launched.size() == 2);
        driver.done.add(launchedHandle(w));
        await().atMost(WAIT).until(w::isDone);
        assertTrue(w.describe().startsWith(two.get(0).describe() + " group(allReduce(seq=1"), w.describe());
        assertEquals(0, two.get(0).pendingCount() + two.get(1).pendingCount());
    }

    @Test
    void optionalLibraryFunctionsAreReportedAsUnsupportedBeforeAnythingIsQueued() {
        Communicator c = comm();
        org.jccl.core.error.UnsupportedFeatureException e =
                assertThrows(org.jccl.core.error.UnsupportedFeatureException.class, c::suspend);
        assertEquals("ncclCommSuspend", e.function());
        assertTrue(e.getMessage().contains("scripted (version 2.28.9)"), e.getMessage());
        assertThrows(org.jccl.core.error.UnsupportedFeatureException.class, c::memStats);
        assertThrows(org.jccl.core.error.UnsupportedFeatureException.class, () -> c.grow(2, null, CommConfig.DEFAULT, c.options()));
        assertThrows(org.jccl.core.error.UnsupportedFeatureException.class, () -> c.shrink(new int[0], CommConfig.DEFAULT, c.options()));
    }

    @Test
    void closeDrainsThenDestroysAndLaterCallsAreRejected() {
        Communicator c = comm();
        Buffer b = buffer(64);
        Work w = allReduce(c, b);
        var closing = c.closeAsync();
        assertFalse(closing.isDone(), "close waits for pending work");
        driver.done.add(launchedHandle(w));
        closing.join();
        assertFalse(c.isOpen());
        Throwable later = assertThrows(CompletionException.class, () -> allReduce(c, b).join()).getCause();
        assertInstanceOf(org.jccl.core.error.InvalidUsageException.class, later);
        assertTrue(later.getMessage().contains("the communicator is closed"), later.getMessage());
    }
}
