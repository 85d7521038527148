package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a communicator says when something takes too long, on the scripted driver: a collective set-up call past its
 * timeout fails typed, naming what the library reports this rank waits for (or the usual cause when the library
 * cannot say, or fails to), and aborts under the abort policy; a work pending longer than {@code jccl.stallReport} is
 * logged once, and not before; a close whose destroy fails still releases the communicator.
 */
class CommunicatorTimeoutsTest extends ScriptedEngineFixture {
    private static final Duration SHORT = Duration.ofMillis(200);
    private static final String WAITING_FOR = "it waits in a window registration for rank 1";

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private final CountDownLatch release = new CountDownLatch(1);
    private PrintStream err;
    private String savedStallReport;

    @BeforeEach
    void captureTheLog() {
        savedStallReport = System.getProperty(JcclSettings.STALL_REPORT.property());
        err = System.err;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err
    }

    @AfterEach
    void restore() {
        release.countDown();
        System.setErr(err);
        if (savedStallReport == null) System.clearProperty(JcclSettings.STALL_REPORT.property());
        else System.setProperty(JcclSettings.STALL_REPORT.property(), savedStallReport);
    }

    private Communicator comm(Duration timeout, TimeoutPolicy policy) {
        return comm(CommOptions.defaults().withTimeout(timeout).withTimeoutPolicy(policy));
    }

    /** A collective set-up call that does not return until the test ends, like a registration a peer never makes. */
    private CompletableFuture<Integer> stuckCall(Communicator c) {
        return Modules.context(c).call("windowRegister", () -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 1;
        });
    }

    private static Throwable failure(CompletableFuture<?> f) {
        await().atMost(WAIT).until(f::isDone);
        return assertThrows(CompletionException.class, f::join).getCause();
    }

    @Test
    void aCallPastItsTimeoutFailsNamingWhatTheLibrarySaysTheRankWaitsForAndAborts() {
        driver.waitingFor = WAITING_FOR;
        Communicator c = comm(SHORT, TimeoutPolicy.ABORT_COMMUNICATOR);
        WorkTimeoutException e = assertInstanceOf(WorkTimeoutException.class, failure(stuckCall(c)));
        assertTrue(e.getMessage().contains("still not done after " + SHORT + " on this rank: " + WAITING_FOR), e.getMessage());
        assertTrue(e.getMessage().contains("windowRegister"), e.getMessage());
        await().atMost(WAIT).until(() -> !c.isOpen());
        CommunicatorAbortedException aborted = assertInstanceOf(CommunicatorAbortedException.class, c.failure());
        assertTrue(aborted.getMessage().contains("windowRegister timed out after " + SHORT), aborted.getMessage());
        assertSame(e, aborted.getCause());
    }

    @Test
    void underTheReportPolicyOnlyTheCallFailsAndTheUsualCauseIsNamedWhenTheLibraryCannotSay() {
        driver.waitingForFailure = new IllegalStateException("the library cannot be asked now");
        Communicator c = comm(SHORT, TimeoutPolicy.REPORT);
        WorkTimeoutException e = assertInstanceOf(WorkTimeoutException.class, failure(stuckCall(c)));
        assertTrue(e.getMessage().contains("check that every rank makes this call, in the same order"), e.getMessage());
        assertTrue(c.isOpen(), "the report policy fails the call alone");
        assertNull(c.failure());
        release.countDown();
        assertEquals(2, Modules.context(c).call("next", () -> 2).join(), "the launch queue goes on once the call returns");
    }

    @Test
    void aCallWithoutATimeoutWaitsAsLongAsItTakes() {
        Communicator c = comm(Duration.ZERO, TimeoutPolicy.ABORT_COMMUNICATOR);
        CompletableFuture<Integer> call = stuckCall(c);
        await().during(Duration.ofMillis(400)).atMost(WAIT).until(() -> !call.isDone());
        release.countDown();
        assertEquals(1, call.join());
        assertTrue(c.isOpen());
    }

    @Test
    void aWorkTimeoutNamesWhatTheLibrarySaysTheRankWaitsFor() {
        driver.waitingFor = WAITING_FOR;
        Communicator c = comm(SHORT, TimeoutPolicy.REPORT);
        Buffer b = buffer(16);
        Work w = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
        WorkTimeoutException e = assertInstanceOf(WorkTimeoutException.class, failure(w));
        assertTrue(e.getMessage().contains("still pending after " + SHORT + " on this rank: " + WAITING_FOR), e.getMessage());
    }

    @Test
    void aStalledWorkIsReportedOnceAfterTheStallReportWithWhatItWaitsFor() {
        System.setProperty(JcclSettings.STALL_REPORT.property(), "100ms");
        driver.waitingFor = WAITING_FOR;
        Communicator c = comm(Duration.ofMinutes(5), TimeoutPolicy.REPORT);
        Buffer b = buffer(16);
        Work w = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
        await().atMost(WAIT).until(() -> stallReports(w) == 1);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> stallReports(w) == 1);
        String line = logText().lines().filter(l -> l.contains("jccl.stallReport")).findFirst().orElseThrow();
        assertTrue(line.contains(WAITING_FOR) && line.contains("it fails at its timeout (PT5M)"), line);
        assertFalse(w.isDone(), "a stall report fails nothing");
    }

    /** 30 s: not before the stall report passes; 0 s: the report is off. */
    @ParameterizedTest
    @ValueSource(strings = {"30s", "0s"})
    void noStallIsReportedBeforeTheStallReportPassesNorWhenItIsOff(String stallReport) {
        System.setProperty(JcclSettings.STALL_REPORT.property(), stallReport);
        Communicator c = comm(Duration.ofMinutes(5), TimeoutPolicy.REPORT);
        Buffer b = buffer(16);
        Work w = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
        await().during(Duration.ofMillis(400)).atMost(WAIT).until(() -> stallReports(w) == 0);
    }

    @Test
    void aCloseWhoseDestroyFailsFailsWithItAndStillReleasesTheCommunicator() {
        Communicator c = comm();
        long stream = c.state().stream().driverStream().handle();
        IllegalStateException destroyFailed = new IllegalStateException("ncclCommDestroy failed");
        driver.destroyFailure = destroyFailed;
        Throwable e = failure(c.closeAsync());
        assertSame(destroyFailed, e);
        assertTrue(driver.destroyedStreams.contains(stream), "the stream is freed with the communicator");
        assertFalse(c.state().cleanUpInOrder(() -> { }), "its launch queue is stopped");
    }

    @Test
    void cleanUpStillRunsInOrderWhileAClosingCommunicatorDrains() {
        Communicator c = comm();
        Buffer b = buffer(16);
        Work w = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM);
        long event = launchedHandle(w);
        CompletableFuture<Void> closed = c.closeAsync();
        AtomicBoolean ran = new AtomicBoolean();
        assertTrue(c.state().cleanUpInOrder(() -> ran.set(true)), "closing: the library still has the communicator");
        await().atMost(WAIT).untilTrue(ran);
        assertFalse(closed.isDone(), "the close waits for the pending work");
        driver.done.add(event);
        closed.join();
        assertTrue(driver.destroyedStreams.contains(c.state().stream().driverStream().handle()));
        assertEquals(c.describe(), c.state().toString());
    }

    @Test
    void anAbortTheLibraryNeverReturnsFromFailsAfterTheAbortTimeoutAndSaysSo() {
        String saved = System.getProperty(JcclSettings.ABORT_TIMEOUT.property());
        System.setProperty(JcclSettings.ABORT_TIMEOUT.property(), "200ms");
        try {
            Communicator returns = comm();
            returns.abort().join();
            driver.abortGate = new CountDownLatch(1);
            Communicator hangs = comm();
            Throwable e = failure(hangs.abort());
            assertInstanceOf(WorkTimeoutException.class, e);
            assertTrue(e.getMessage().contains("did not return within PT0.2S (jccl.abortTimeout)"), e.getMessage());
            await().atMost(WAIT).until(() -> abortTimeoutLogs() == 1);
            await().during(Duration.ofMillis(400)).atMost(WAIT).until(() -> abortTimeoutLogs() == 1);
            assertTrue(logText().contains(hangs.describe() + " ncclCommAbort did not return"), logText());
        } finally {
            driver.abortGate.countDown();
            if (saved == null) System.clearProperty(JcclSettings.ABORT_TIMEOUT.property());
            else System.setProperty(JcclSettings.ABORT_TIMEOUT.property(), saved);
        }
    }

    @Test
    void anAbortedCommunicatorRefusesNewWorkWithTheAbortsCause() {
        Communicator c = comm();
        c.abort().join();
        CommunicatorAbortedException e = assertThrows(CommunicatorAbortedException.class, () -> c.state().checkOpen());
        assertTrue(e.getMessage().contains("aborted by the application"), e.getMessage());
        Buffer b = buffer(16);
        Throwable failed = failure(c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM));
        assertTrue(failed.getMessage().contains("aborted by the application"), failed.getMessage());
    }

    private long abortTimeoutLogs() {
        return logText().lines().filter(l -> l.contains("ncclCommAbort did not return within")).count();
    }

    private long stallReports(Work w) {
        return logText().lines().filter(l -> l.contains("seq=" + w.sequence()) && l.contains("jccl.stallReport")).count();
    }

    private String logText() {
        return log.toString(StandardCharsets.UTF_8);
    }
}
