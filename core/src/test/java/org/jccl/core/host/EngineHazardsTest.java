package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Thread hazards and lifecycle defects of the engine, each looped or staged so that the old code failed: stream
 * work out of call order, waiting on the event thread, a blocked callback nobody noticed, books updated after
 * completion, abort of a closed communicator, size arithmetic that wrapped.
 */
class EngineHazardsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final List<Communicator> comms = new ArrayList<>();
    private final List<Buffer> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (Communicator c : comms) c.close();
        for (Buffer b : buffers) b.close();
    }

    private List<Communicator> ranks(int n) throws Exception {
        List<Communicator> all = host().initAll(n).get(30, TimeUnit.SECONDS);
        comms.addAll(all);
        return all;
    }

    private Buffer buffer(long bytes) {
        Buffer b = host().allocate(0, bytes);
        buffers.add(b);
        return b;
    }

    private static void fill(Buffer b, float value) {
        ByteBuffer bytes = ByteBuffer.allocate((int) b.byteSize()).order(ByteOrder.nativeOrder());
        while (bytes.hasRemaining()) bytes.putFloat(value);
        bytes.flip();
        b.write(0, bytes);
    }

    /**
     * A copy issued on a communicator's stream right after its all-reduce must see the result: the stream's work
     * goes through the communicator's launch queue. Before, the copy was enqueued by the caller at once, ahead of the
     * all-reduce still waiting in the launch queue, and read stale data.
     */
    @Test
    void workOnACommunicatorsStreamFollowsItsOperationsInCallOrder() throws Exception {
        List<Communicator> c = ranks(2);
        int n = 1024;
        Buffer[] send = {buffer(4L * n), buffer(4L * n)};
        Buffer[] recv = {buffer(4L * n), buffer(4L * n)};
        Buffer[] out = {buffer(4L * n), buffer(4L * n)};
        for (int round = 1; round <= 100; round++) {
            for (int r = 0; r < 2; r++) fill(send[r], round);
            List<Work> copies = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                c.get(r).allReduce(send[r], recv[r], n, DataType.FLOAT32, ReduceOp.SUM);
                copies.add(c.get(r).stream().copy(out[r], recv[r], 4L * n));
            }
            for (Work w : copies) w.get(30, TimeUnit.SECONDS);
            float[] expected = new float[n];
            java.util.Arrays.fill(expected, 2f * round);
            for (int r = 0; r < 2; r++) assertArrayEquals(expected, read(out[r]), "round " + round + ", rank " + r);
        }
    }

    /**
     * An event recorded on a communicator's stream right after its all-reduce covers it: another stream that waits
     * for the event sees the result. Recording later on the launch thread without waiting for it, the other stream
     * found the event not yet recorded and copied stale data.
     */
    @Test
    void anEventRecordedOnACommunicatorsStreamCoversItsOperations() throws Exception {
        List<Communicator> c = ranks(2);
        int n = 1024;
        Buffer[] send = {buffer(4L * n), buffer(4L * n)};
        Buffer[] recv = {buffer(4L * n), buffer(4L * n)};
        Buffer out = buffer(4L * n);
        try (org.jccl.core.Stream other = host().createStream(-1);
             org.jccl.core.Event done = host().createEvent(-1, false)) {
            for (int round = 1; round <= 100; round++) {
                for (int r = 0; r < 2; r++) fill(send[r], round);
                for (int r = 0; r < 2; r++) c.get(r).allReduce(send[r], recv[r], n, DataType.FLOAT32, ReduceOp.SUM);
                done.record(c.get(0).stream());
                other.waitFor(done);
                other.copy(out, recv[0], 4L * n).get(30, TimeUnit.SECONDS);
                float[] expected = new float[n];
                java.util.Arrays.fill(expected, 2f * round);
                assertArrayEquals(expected, read(out), "round " + round);
            }
        }
    }

    /** Waiting for a work on the event thread would wait for itself: it fails fast instead of freezing the process. */
    @Test
    void joiningAWorkOnTheEventThreadFailsFast() throws Exception {
        Communicator c = ranks(1).get(0);
        Buffer b = buffer(64);
        CompletableFuture<Void> nested = onEventThread(c, b, () -> c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).join());
        Throwable e = assertThrows(ExecutionException.class, () -> nested.get(30, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(IllegalStateException.class, e);
        assertTrue(e.getMessage().contains("event thread"), e.getMessage());
        c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).get(30, TimeUnit.SECONDS); // the process goes on
    }

    /** A callback that holds the event thread past the threshold is reported (logged with its stack, and counted). */
    @Test
    void aCallbackThatHoldsTheEventThreadIsReported() throws Exception {
        String key = "jccl.eventThread.stallWarning";
        System.setProperty(key, "100ms");
        CountDownLatch release = new CountDownLatch(1);
        try {
            Communicator c = ranks(1).get(0);
            Backend backend = c.backend();
            Buffer b = buffer(64);
            long before = backend.eventThreadStallCount();
            onEventThread(c, b, () -> awaitQuietly(release));
            await().atMost(WAIT).until(() -> backend.eventThreadStallCount() > before);
            release.countDown();
            c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).get(30, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            System.clearProperty(key);
        }
    }

    /** A thread returning from join() sees the communicator's books already updated. */
    @Test
    void theBooksAreUpdatedBeforeAWorkCompletes() throws Exception {
        Communicator c = ranks(1).get(0);
        Buffer b = buffer(64);
        for (int i = 0; i < 3000; i++) {
            c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).join();
            assertEquals(0, c.pendingCount(), "after join " + i);
        }
    }

    /**
     * The same across communicators: one work of a group over two ranks (one event, two pending sets) is off both
     * ranks' books, and its memory released, when join() returns — whichever rank the joiner reads first.
     */
    @Test
    void theBooksOfEveryParticipantAreUpdatedBeforeAGroupCompletes() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer[] b = {buffer(64), buffer(64)};
        for (int i = 0; i < 1500; i++) {
            Group g = Group.create();
            for (int r = 0; r < 2; r++) g.add(c.get(r), Operation.allReduce(b[r], b[r], 16, DataType.FLOAT32, ReduceOp.SUM));
            g.submit().join();
            int first = i % 2;
            assertEquals(0, c.get(first).pendingCount(), "rank " + first + " after join " + i);
            assertEquals(0, c.get(1 - first).pendingCount(), "rank " + (1 - first) + " after join " + i);
        }
    }

    /** Closing while the last work completes always finishes (the drain future is published safely). */
    @Test
    void closeRacingTheLastCompletionFinishes() throws Exception {
        for (int i = 0; i < 100; i++) {
            Communicator c = host().initAll(1).get(30, TimeUnit.SECONDS).get(0);
            Buffer b = buffer(64);
            c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM);
            c.closeAsync().get(30, TimeUnit.SECONDS);
            b.close();
        }
    }

    /** abort() of a closed communicator has nothing to do and completes at once (it used to never complete). */
    @Test
    void abortAfterCloseCompletes() throws Exception {
        Communicator c = host().initAll(1).get(30, TimeUnit.SECONDS).get(0);
        c.close();
        c.abort().get(5, TimeUnit.SECONDS);
        c.closeAsync().get(5, TimeUnit.SECONDS);
    }

    /** count × nranks that overflows a long is refused before anything is enqueued; the communicator goes on. */
    @Test
    void countsWhoseTotalOverflowAreRefused() throws Exception {
        List<Communicator> c = ranks(3);
        Buffer s = buffer(64);
        Buffer r = buffer(64);
        long count = Long.MAX_VALUE / 3 + 1;
        for (Communicator comm : c) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> comm.allToAll(s, r, count, DataType.INT8));
            assertTrue(e.getMessage().contains("overflows"), e.getMessage());
            assertEquals(0, comm.pendingCount());
        }
        List<Work> works = new ArrayList<>();
        for (Communicator comm : c) works.add(comm.allToAll(s, r, 1, DataType.INT8));
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
    }

    /**
     * Runs {@code action} in a completion callback on the event thread. A work that completed before its callback
     * was attached runs the callback on the caller instead (a loaded machine makes that likely): such rounds are
     * skipped and retried.
     */
    private static CompletableFuture<Void> onEventThread(Communicator c, Buffer b, Runnable action) {
        Thread eventThread = c.backend().eventThread();
        for (int attempt = 0; attempt < 1000; attempt++) {
            AtomicBoolean ran = new AtomicBoolean();
            CompletableFuture<Void> f = c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).thenRun(() -> {
                if (Thread.currentThread() != eventThread) return;
                ran.set(true);
                action.run();
            });
            if (ran.get() || !f.isDone()) return f;
        }
        throw new AssertionError("no callback reached the event thread in 1000 rounds");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
