package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** {@link Step#replay(Completion)} on the host backend: told once per replay, refused typed, and the close waits. */
class StepReplayCompletionHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    final Backend host = Jccl.backend(BackendKind.HOST);

    /** Counts what it is told; one object for every replay, as a serving loop keeps. */
    static final class Told implements Completion {
        final AtomicInteger succeeded = new AtomicInteger();
        final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();

        @Override
        public void completed(@Nullable Throwable failure) {
            threads.add(Thread.currentThread().getName());
            if (failure == null) succeeded.incrementAndGet();
            else failures.add(failure);
        }

        int told() {
            return succeeded.get() + failures.size();
        }
    }

    @Test
    void everyReplayIsToldOnceWithTheRightValuesAndTheBooksEmpty() throws Exception {
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        List<Buffer> buffers = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Buffer b = host.allocate(-1, 4);
            b.write(0, new float[] {1});
            buffers.add(b);
            steps.add(Step.builder(comms.get(r)).add(Operation.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM))
                    .build().get(30, TimeUnit.SECONDS));
        }
        int replays = 12; // each doubles the value: 2^12 fits a float exactly
        List<Told> told = List.of(new Told(), new Told());
        List<Thread> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int rank = r;
            Thread t = new Thread(() -> {
                for (int i = 0; i < replays; i++) steps.get(rank).replay(told.get(rank)); // all in flight at once
            });
            ranks.add(t);
            t.start();
        }
        for (Thread t : ranks) t.join(WAIT.toMillis());
        for (int r = 0; r < 2; r++) {
            Told t = told.get(r);
            await().atMost(WAIT).until(() -> t.told() == replays);
            assertEquals(List.of(), List.copyOf(t.failures));
            assertEquals(List.of("jccl-event"), t.threads.stream().distinct().toList(), "told on the event thread");
            assertEquals(0, comms.get(r).pendingCount());
            assertArrayEquals(new float[] {4096}, buffers.get(r).readFloats(0, 1));
        }
        for (Step s : steps) s.close();
        assertEquals(replays, told.get(0).told(), "nothing told twice");
        for (Buffer b : buffers) b.close();
        for (Communicator c : comms) c.close();
    }

    @Test
    void aReplayRefusedByTheCommunicatorIsToldAtOnceOnTheCallersThreadAndAClosedStepThrows() throws Exception {
        Communicator comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        try (Buffer b = host.allocate(-1, 4)) {
            Step step = Step.builder(comm).add(Operation.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM)).build().join();
            comm.abort().get(30, TimeUnit.SECONDS);
            Told told = new Told();
            step.replay(told);
            assertEquals(1, told.failures.size(), "told before replay returned");
            assertInstanceOf(CommunicatorAbortedException.class, told.failures.peek());
            assertEquals(List.of(Thread.currentThread().getName()), List.copyOf(told.threads));
            step.close();
            assertThrows(InvalidUsageException.class, () -> step.replay(told));
            assertEquals(1, told.told(), "a replay refused at the call is not told");
        }
    }

    @Test
    void theCloseWaitsForEveryReplayInFlightAndThenReleasesTheBuffers() throws Exception {
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        try (Buffer b0 = host.allocate(-1, 4); Buffer b1 = host.allocate(-1, 4)) {
            Step step = Step.builder(comms.get(0)).add(Operation.allReduce(b0, b0, 1, DataType.FLOAT32, ReduceOp.SUM))
                    .build().join();
            Told told = new Told();
            for (int i = 0; i < 3; i++) step.replay(told); // rank 1 has not joined: all three wait
            CompletableFuture<Void> closed = step.closeAsync();
            assertEquals(0, told.told());
            assertFalse(closed.isDone(), "closed with replays in flight");
            for (int i = 0; i < 3; i++) comms.get(1).allReduce(b1, b1, 1, DataType.FLOAT32, ReduceOp.SUM);
            closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(3, told.succeeded.get(), "every replay told before the close completed");
        }
        for (Communicator c : comms) c.close();
    }

    @Test
    void whileAnObserverWatchesTheReplayGoesThroughAWorkItSees() throws Exception {
        List<Work> seen = new ArrayList<>();
        WorkObserver observer = new WorkObserver() {
            @Override
            public void issued(Work work) {
                synchronized (seen) {
                    seen.add(work);
                }
            }

            @Override
            public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
            }
        };
        Communicator comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        Jccl.addWorkObserver(observer);
        try (Buffer b = host.allocate(-1, 4)) {
            Step step = Step.builder(comm).add(Operation.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM)).build().join();
            AtomicReference<String> outcome = new AtomicReference<>();
            step.replay(failure -> outcome.set(String.valueOf(failure)));
            await().atMost(WAIT).until(() -> outcome.get() != null);
            assertEquals("null", outcome.get());
            synchronized (seen) {
                assertEquals(1, seen.size());
                assertEquals("step", seen.get(0).operation());
            }
            step.close();
        } finally {
            Jccl.removeWorkObserver(observer);
            comm.close();
        }
    }
}
