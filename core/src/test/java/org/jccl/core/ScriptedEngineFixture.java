package org.jccl.core;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.jccl.core.engine.TestWorks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Tests of the engine on a fresh {@link ScriptedDriver} each: the communicators and buffers a test makes here are
 * released after it, once every gate is open and every event complete.
 */
abstract class ScriptedEngineFixture {
    static final Duration WAIT = Duration.ofSeconds(10);

    ScriptedDriver driver;
    Backend backend;
    final List<Communicator> comms = new ArrayList<>();
    final List<Buffer> buffers = new ArrayList<>();

    @BeforeEach
    void openBackend() {
        driver = new ScriptedDriver();
        backend = new Backend(driver);
    }

    @AfterEach
    void releaseEverything() {
        driver.launchFailure = null;
        CountDownLatch gate = driver.launchGate;
        if (gate != null) gate.countDown();
        driver.autoComplete = true;
        driver.done.addAll(driver.events.keySet());
        for (Communicator c : comms) c.closeAsync();
        for (Buffer b : buffers) b.close();
    }

    /** A one-rank communicator. */
    Communicator comm(CommOptions options) {
        Communicator c = backend.initRank(backend.newUniqueId(), 1, 0, -1, CommConfig.DEFAULT, options).join();
        comms.add(c);
        return c;
    }

    Communicator comm() {
        return comm(CommOptions.defaults());
    }

    /** Both ranks of a two-rank clique, in one process. */
    List<Communicator> twoCommunicators() {
        List<Communicator> two = backend.initAll(new int[] {-1, -1}, CommOptions.defaults()).join();
        comms.addAll(two);
        return two;
    }

    Buffer buffer(long bytes) {
        Buffer b = backend.allocate(-1, bytes);
        buffers.add(b);
        return b;
    }

    /** The handle the work's event was recorded with, once its launch recorded it. */
    static long launchedHandle(Work w) {
        await().atMost(WAIT).until(() -> TestWorks.event(w) != null);
        return TestWorks.event(w).handle();
    }
}
