package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The observer hook: each communicator operation seen once issued and once completed, and never stream work. */
class WorkObserverTest {
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final AtomicLong elapsed = new AtomicLong(-1);
    private final WorkObserver recording = new WorkObserver() {
        @Override
        public void issued(Work work) {
            seen.add("issued " + work.operation() + " " + work.bytes() + " done=" + work.isDone());
        }

        @Override
        public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
            seen.add("completed " + work.operation() + " error=" + error + " done=" + work.isDone() + " elapsed>=0=" + (elapsedNanos >= 0));
            elapsed.set(elapsedNanos);
        }
    };
    private final WorkObserver throwing = new WorkObserver() {
        @Override
        public void issued(Work work) {
            throw new IllegalStateException("a broken observer");
        }

        @Override
        public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
            throw new IllegalStateException("a broken observer");
        }
    };

    @AfterEach
    void tearDown() {
        Jccl.removeWorkObserver(recording);
        Jccl.removeWorkObserver(throwing);
    }

    @Test
    void seesEachOperationOnceBeforeItCompletesAndNeverStreamWorkNorAFailingObserversException() throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        Jccl.addWorkObserver(throwing);
        Jccl.addWorkObserver(recording);
        try (Communicator c = host.initAll(1).get(30, TimeUnit.SECONDS).get(0); Buffer b = host.allocate(0, 64)) {
            long before = System.nanoTime();
            c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).join();
            long around = System.nanoTime() - before;
            c.stream().fill(b, 0, 64).join();
            assertTrue(elapsed.get() <= around, "the time from issue to completion, " + elapsed.get() + " ns, lies within "
                    + around + " ns");
            assertEquals(List.of("issued allReduce 64 done=false", "completed allReduce error=null done=false elapsed>=0=true"), seen);
        }
        assertTrue(Jccl.removeWorkObserver(recording));
        assertFalse(Jccl.removeWorkObserver(recording), "already removed");
    }
}
