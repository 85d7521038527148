package org.jccl.core.thread;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The ordered task thread behind launch queues and host streams. */
class SerialWorkerTest {

    /**
     * A submission racing stop() is either refused or run: never accepted and dropped (a future waiting on it, e.g.
     * a split racing an abort, would hang). Loops the race; the old check-then-offer lost a task within a few
     * hundred rounds.
     */
    @Test
    void anAcceptedTaskIsNeverDropped() throws Exception {
        for (int round = 0; round < 1000; round++) {
            SerialWorker worker = new SerialWorker("test-worker", () -> { }, new Backoff(0, 0, 1_000));
            AtomicInteger accepted = new AtomicInteger();
            AtomicInteger ran = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            Thread submitter = new Thread(() -> {
                awaitQuietly(go);
                for (int i = 0; i < 4; i++) if (worker.submit(ran::incrementAndGet)) accepted.incrementAndGet();
            });
            submitter.start();
            go.countDown();
            worker.stop();
            submitter.join();
            int round0 = round;
            await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10))
                    .until(() -> ran.get() == accepted.get());
            assertEquals(accepted.get(), ran.get(), "round " + round0);
        }
    }

    /** A handler with its argument (the engine's launch of one work) and a plain task share one order. */
    @Test
    void handlersAndTasksRunInSubmissionOrder() {
        SerialWorker worker = new SerialWorker("test-worker", () -> { }, new Backoff(0, 0, 1_000));
        List<Integer> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 200; i++) {
            int n = i;
            if (i % 3 == 0) worker.submit(ran::add, n);
            else worker.submit(() -> ran.add(n));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 200);
        assertEquals(IntStream.range(0, 200).boxed().toList(), ran);
        worker.stop();
    }

    @Test
    void nothingIsAcceptedOnceStopped() {
        SerialWorker worker = new SerialWorker("test-worker", () -> { }, new Backoff(0, 0, 1_000));
        worker.stop();
        assertFalse(worker.submit(() -> { }));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
