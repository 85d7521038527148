package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.Errors;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A communicator whose creation never finishes (a rank that never joins) fails its future, typed, after the
 * communicator's timeout instead of waiting forever, and what the library makes or was making is aborted — for a
 * non-blocking creation the engine polls and for a blocking one stuck inside the library.
 */
class CreationTimeoutTest {
    private static final CommOptions SHORT = CommOptions.defaults().withTimeout(Duration.ofMillis(300));

    @Test
    void aNonBlockingCreationStillInProgressTimesOutAndIsAborted() {
        ScriptedDriver driver = new ScriptedDriver();
        driver.asyncError = Errors.IN_PROGRESS;
        Backend backend = new Backend(driver);
        var creating = backend.initRank(backend.newUniqueId(), 2, 0, -1, CommConfig.builder().blocking(false).build(), SHORT);
        timedOut(creating);
        await().atMost(Duration.ofSeconds(10)).until(() -> driver.abortCalled);
    }

    @Test
    void aBlockingCreationStuckInTheLibraryTimesOutAndIsAbortedWhenItReturns() {
        ScriptedDriver driver = new ScriptedDriver();
        driver.initGate = new CountDownLatch(1);
        Backend backend = new Backend(driver);
        var creating = backend.initRank(backend.newUniqueId(), 2, 0, -1, CommConfig.DEFAULT, SHORT);
        timedOut(creating);
        driver.initGate.countDown(); // the library returns at last: nobody holds the communicator, so it is aborted
        await().atMost(Duration.ofSeconds(10)).until(() -> driver.abortCalled);
    }

    private static void timedOut(java.util.concurrent.CompletableFuture<Communicator> creating) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> creating.get(10, TimeUnit.SECONDS));
        assertInstanceOf(WorkTimeoutException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("creation still not done"), e.getCause().getMessage());
    }
}
