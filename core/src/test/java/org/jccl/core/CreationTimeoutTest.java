package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.Errors;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A communicator whose creation never finishes (a rank that never joins) fails its future, typed, after
 * {@code jccl.initTimeout} instead of waiting forever, and what the library makes or was making is aborted — for a
 * non-blocking creation the engine polls and for a blocking one stuck inside the library. The work timeout does not
 * apply to creation: a communicator with a work timeout shorter than its creation is still made.
 */
class CreationTimeoutTest {
    private static String initTimeoutBefore;

    @BeforeAll
    static void shortInitTimeout() {
        initTimeoutBefore = System.getProperty("jccl.initTimeout");
        System.setProperty("jccl.initTimeout", "300ms");
    }

    @AfterAll
    static void restoreInitTimeout() {
        if (initTimeoutBefore == null) System.clearProperty("jccl.initTimeout");
        else System.setProperty("jccl.initTimeout", initTimeoutBefore);
    }

    @Test
    void aNonBlockingCreationStillInProgressTimesOutAndIsAborted() {
        ScriptedDriver driver = new ScriptedDriver();
        driver.asyncError = Errors.IN_PROGRESS;
        Backend backend = new Backend(driver);
        var creating = backend.initRank(backend.newUniqueId(), 2, 0, -1, CommConfig.builder().blocking(false).build(),
                CommOptions.defaults());
        timedOut(creating);
        await().atMost(Duration.ofSeconds(10)).until(() -> driver.abortCalled);
    }

    @Test
    void aBlockingCreationStuckInTheLibraryTimesOutAndIsAbortedWhenItReturns() {
        ScriptedDriver driver = new ScriptedDriver();
        driver.initGate = new CountDownLatch(1);
        Backend backend = new Backend(driver);
        var creating = backend.initRank(backend.newUniqueId(), 2, 0, -1, CommConfig.DEFAULT, CommOptions.defaults());
        timedOut(creating);
        driver.initGate.countDown(); // the library returns at last: nobody holds the communicator, so it is aborted
        await().atMost(Duration.ofSeconds(10)).until(() -> driver.abortCalled);
    }

    @Test
    void cancellingACreationAbortsWhatTheLibraryMakesAfterwards() {
        System.setProperty("jccl.initTimeout", "1m"); // the bounded future is what the caller holds; it must not fire
        try {
            ScriptedDriver driver = new ScriptedDriver();
            driver.initGate = new CountDownLatch(1);
            Backend backend = new Backend(driver);
            var creating = backend.initRank(backend.newUniqueId(), 2, 0, -1, CommConfig.DEFAULT, CommOptions.defaults());
            assertTrue(creating.cancel(false));
            driver.initGate.countDown(); // the library returns: nobody will take the communicator, so it is aborted
            await().atMost(Duration.ofSeconds(10)).until(() -> driver.abortCalled);
        } finally {
            System.setProperty("jccl.initTimeout", "300ms");
        }
    }

    @Test
    void aWorkTimeoutShorterThanTheCreationDoesNotFailIt() throws Exception {
        System.setProperty("jccl.initTimeout", "0"); // no creation limit here: only the work timeout could fire
        try {
            ScriptedDriver driver = new ScriptedDriver();
            driver.initGate = new CountDownLatch(1);
            Backend backend = new Backend(driver);
            var creating = backend.initRank(backend.newUniqueId(), 1, 0, -1, CommConfig.DEFAULT,
                    CommOptions.defaults().withTimeout(Duration.ofMillis(1)));
            // Well past the 1 ms work timeout, the creation is still waiting, not failed.
            await().pollDelay(Duration.ofMillis(50)).atMost(Duration.ofSeconds(10)).until(() -> !creating.isDone());
            driver.initGate.countDown();
            creating.get(10, TimeUnit.SECONDS).close();
            assertFalse(driver.abortCalled);
        } finally {
            System.setProperty("jccl.initTimeout", "300ms");
        }
    }

    private static void timedOut(java.util.concurrent.CompletableFuture<Communicator> creating) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> creating.get(10, TimeUnit.SECONDS));
        assertInstanceOf(WorkTimeoutException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("creation still not done"), e.getCause().getMessage());
    }
}
