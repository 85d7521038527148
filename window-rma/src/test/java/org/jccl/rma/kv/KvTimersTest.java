package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The process-wide deadline timer of KV transfers holds nothing and no thread once no deadline is pending. */
class KvTimersTest {
    @Test
    void aCancelledDeadlineLeavesAtOnceAndTheIdleTimerThreadEnds() {
        // An hour-long deadline cancelled at once, as every request that ends before its deadline does: while it sat
        // in the queue the thread could not end (a pool thread times out only over an empty queue).
        ScheduledFuture<?> deadline = KvTimers.after(Duration.ofHours(1), () -> { });
        assertEquals(List.of("jccl-kv-timer"), KvChaosTest.threads("jccl-kv-timer"));
        deadline.cancel(false);
        await().atMost(KvTimers.IDLE.plusSeconds(10)).untilAsserted(() -> assertEquals(List.of(), KvChaosTest.threads("jccl-kv-timer")));
    }

    @Test
    void aDeadlineAfterTheThreadEndedStillFires() throws Exception {
        await().atMost(KvTimers.IDLE.plusSeconds(10)).untilAsserted(() -> assertEquals(List.of(), KvChaosTest.threads("jccl-kv-timer")));
        CountDownLatch fired = new CountDownLatch(1);
        KvTimers.after(Duration.ofMillis(10), fired::countDown);
        assertTrue(fired.await(10, TimeUnit.SECONDS), "a deadline after an idle spell never fired");
    }
}
