package org.jccl.core.jfr;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.engine.EventLoop;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * jccl's JFR events on host ranks in this JVM, recorded with {@code jccl.jfc} and read back from the recording:
 * operations with their fields and three timestamps, lifecycle calls, timeouts and event-thread stalls.
 */
class FlightRecorderEventsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dumps;
    private final AtomicInteger dumpCount = new AtomicInteger();
    private final Backend host = Jccl.backend(BackendKind.HOST);
    private final List<Communicator> comms = new ArrayList<>();
    private final List<Buffer> buffers = new ArrayList<>();
    private Recording recording;

    @BeforeEach
    void startRecording() {
        recording = new Recording(JfrSettings.configuration());
        recording.start();
    }

    @AfterEach
    void closeEverything() {
        for (Communicator c : comms) c.abort().join();
        for (Buffer b : buffers) b.close();
        recording.close();
    }

    private List<Communicator> ranks(int n, CommOptions options) throws Exception {
        int[] devices = new int[n];
        List<Communicator> made = host.initAll(devices, options).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        comms.addAll(made);
        return made;
    }

    private Buffer buffer(long bytes) {
        Buffer b = host.allocate(-1, bytes);
        buffers.add(b);
        return b;
    }

    /** The events named {@code name} recorded so far, oldest first. */
    private List<RecordedEvent> recorded(String name) {
        Path file = dumps.resolve("dump-" + dumpCount.incrementAndGet() + ".jfr");
        try {
            recording.dump(file);
            List<RecordedEvent> out = new ArrayList<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                if (e.getEventType().getName().equals(name)) out.add(e);
            }
            out.sort(Comparator.comparing(RecordedEvent::getStartTime));
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The events named {@code name} of communicator {@code id} recorded so far, oldest first. */
    private List<RecordedEvent> recorded(String name, String id) {
        return recorded(name).stream().filter(e -> id.equals(e.getString("communicator"))).toList();
    }

    /** Waits until {@code count} events named {@code name} of communicator {@code id} are recorded; returns them. */
    private List<RecordedEvent> awaitRecorded(String name, String id, int count) {
        await().atMost(WAIT).until(() -> recorded(name, id).size() >= count);
        return recorded(name, id);
    }

    private static RecordedEvent only(List<RecordedEvent> events, String field, Object value) {
        List<RecordedEvent> matching = events.stream().filter(e -> value.equals(e.getValue(field))).toList();
        assertEquals(1, matching.size(), field + "=" + value + " in " + events);
        return matching.get(0);
    }

    @Test
    void everyOperationIsRecordedFromIssueThroughLaunchToCompletionWithItsFields() throws Exception {
        List<Communicator> c = ranks(2, CommOptions.defaults());
        List<Work> works = new ArrayList<>();
        for (Communicator rank : c) {
            Buffer floats = buffer(64);
            works.add(rank.allReduce(floats, floats, 16, DataType.FLOAT32, ReduceOp.SUM));
            Buffer ints = buffer(16);
            works.add(rank.broadcast(ints, ints, 4, DataType.INT32, 1));
            int peer = 1 - rank.rank();
            works.add(Group.create().add(rank, Operation.send(buffer(40), 10, DataType.INT32, peer))
                    .add(rank, Operation.recv(buffer(40), 10, DataType.INT32, peer)).submit());
        }
        for (Work w : works) w.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        String id = c.get(0).id();

        List<RecordedEvent> ops = awaitRecorded(OperationEvent.NAME, id, 6);
        assertEquals(6, ops.size(), ops.toString());
        List<RecordedEvent> ofRank1 = ops.stream().filter(e -> e.getInt("rank") == 1).toList();
        RecordedEvent allReduce = only(ofRank1, "operation", "allReduce");
        assertEquals(2, allReduce.getInt("size"));
        assertEquals(1, allReduce.getLong("sequence"));
        assertEquals(64, allReduce.getLong("bytes"));
        assertEquals("float32", allReduce.getString("dataType"));
        assertEquals(-1, allReduce.getInt("peer"));
        assertEquals("success", allReduce.getString("outcome"));
        assertNull(allReduce.getValue("exception"));
        assertEquals(Thread.currentThread().getName(), allReduce.getThread("issuer").getJavaName());
        long untilLaunch = allReduce.getLong("issueToLaunch");
        // The span is System.nanoTime's, the duration JFR's clock: they may differ by a conversion's rounding.
        long clocksApart = 100_000;
        assertTrue(untilLaunch >= 0 && untilLaunch <= allReduce.getDuration().toNanos() + clocksApart,
                "the launch, " + untilLaunch + " ns after the issue, lies between the issue and the completion, "
                        + allReduce.getDuration());

        RecordedEvent broadcast = only(ofRank1, "operation", "broadcast");
        assertEquals(2, broadcast.getLong("sequence"));
        assertEquals("int32", broadcast.getString("dataType"));
        assertEquals(1, broadcast.getInt("peer"), "the root");

        RecordedEvent group = only(ofRank1, "operation", "group");
        assertEquals(3, group.getLong("sequence"), "a group is named by its first operation's sequence number");
        assertEquals(80, group.getLong("bytes"));
        assertNull(group.getString("dataType"));
    }

    @Test
    void aTimeoutIsRecordedWithTheWorkItFailedAndTheAbortItCaused() throws Exception {
        List<Communicator> c = ranks(2, CommOptions.defaults());
        Buffer b = buffer(16);
        // Rank 1 never joins: rank 0's allReduce times out under its own short timeout and aborts the communicator.
        Work lone = c.get(0).submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMillis(300));
        Throwable failure = assertThrows(ExecutionException.class, () -> lone.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getCause();
        assertTrue(failure instanceof WorkTimeoutException, String.valueOf(failure));
        String id = c.get(0).id();

        RecordedEvent timeout = awaitRecorded(TimeoutEvent.NAME, id, 1).get(0);
        assertEquals(0, timeout.getInt("rank"));
        assertEquals(1, timeout.getLong("sequence"));
        assertTrue(timeout.getString("what").contains("allReduce(seq=1"), timeout.getString("what"));
        assertEquals(Duration.ofMillis(300), timeout.getDuration("timeout"));
        // The host backend knows which rank is missing and names it instead of the usual cause.
        assertTrue(timeout.getString("waitingFor").contains("for rank 1, which has not joined it"), timeout.getString("waitingFor"));
        assertTrue(timeout.getBoolean("abortsCommunicator"));

        RecordedEvent op = awaitRecorded(OperationEvent.NAME, id, 1).get(0);
        assertEquals("error", op.getString("outcome"));
        assertEquals(WorkTimeoutException.class.getName(), op.getClass("exception").getName());
        // The deadline counts from the work's creation, a little before its event begins.
        assertTrue(op.getDuration().compareTo(Duration.ofMillis(250)) >= 0, "recorded until the timeout: " + op.getDuration());

        RecordedEvent abort = only(awaitRecorded(LifecycleEvent.NAME, id, 2), "call", "abort");
        assertEquals(0, abort.getInt("rank"));
        assertTrue(abort.getString("reason").contains("timed out"), abort.getString("reason"));
        assertEquals("success", abort.getString("outcome"));
    }

    @Test
    void creationSplitCloseAndAbortAreRecordedAsLifecycleCalls() throws Exception {
        List<Communicator> c = ranks(2, CommOptions.defaults());
        String id = c.get(0).id();
        List<CompletableFuture<Communicator>> splits = new ArrayList<>();
        for (Communicator rank : c) splits.add(rank.split(0, rank.rank()));
        List<Communicator> children = new ArrayList<>();
        for (CompletableFuture<Communicator> s : splits) children.add(s.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        comms.addAll(children);
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Communicator child : children) closing.add(child.closeAsync());
        for (CompletableFuture<Void> f : closing) f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        c.get(1).abort().get(WAIT.toSeconds(), TimeUnit.SECONDS);

        // initAll (one call for both ranks), split on each rank, abort on rank 1.
        List<RecordedEvent> calls = awaitRecorded(LifecycleEvent.NAME, id, 4);
        RecordedEvent initAll = only(calls, "call", "initAll");
        assertEquals(-1, initAll.getInt("rank"), "initAll makes every rank");
        assertEquals(2, initAll.getInt("size"));
        assertEquals("success", initAll.getString("outcome"));
        List<RecordedEvent> splitCalls = calls.stream().filter(e -> e.getString("call").equals("split")).toList();
        assertEquals(2, splitCalls.size(), calls.toString());
        RecordedEvent abort = only(calls, "call", "abort");
        assertEquals(1, abort.getInt("rank"));
        assertTrue(abort.getString("reason").contains("aborted by the application"), abort.getString("reason"));
        assertEquals(Thread.currentThread().getName(), abort.getThread("caller").getJavaName());

        List<RecordedEvent> childCalls = awaitRecorded(LifecycleEvent.NAME, children.get(0).id(), 2);
        assertEquals(List.of("close", "close"), childCalls.stream().map(e -> e.getString("call")).toList());
        assertTrue(childCalls.stream().allMatch(e -> e.getString("outcome").equals("success")), childCalls.toString());
    }

    @Test
    void aCallbackThatHoldsTheEventThreadIsRecordedWithWhereItIsStuck() throws Exception {
        String key = "jccl.eventThread.stallWarning";
        System.setProperty(key, "100ms");
        CountDownLatch release = new CountDownLatch(1);
        long stallsBefore = EventLoop.get().stallCount();
        try {
            Communicator c = ranks(1, CommOptions.defaults()).get(0);
            Buffer b = buffer(64);
            onEventThread(c, b, () -> awaitQuietly(release));
            await().atMost(WAIT).until(() -> !recorded(StallEvent.NAME).isEmpty());
            release.countDown();
            assertTrue(EventLoop.get().stallCount() > stallsBefore, "the stall is counted");
            RecordedEvent stall = recorded(StallEvent.NAME).get(0);
            assertEquals(host.eventThread().getName(), stall.getThread("stalledThread").getJavaName());
            assertTrue(stall.getDuration("heldFor").compareTo(Duration.ofMillis(100)) >= 0, stall.getDuration("heldFor").toString());
            assertEquals(Duration.ofMillis(100), stall.getDuration("threshold"));
            assertTrue(stall.getString("eventThreadStack").contains("awaitQuietly"), stall.getString("eventThreadStack"));
        } finally {
            release.countDown();
            System.clearProperty(key);
        }
    }

    /** Runs {@code action} in a completion callback on the event thread (a work already done runs it here instead). */
    private static void onEventThread(Communicator c, Buffer b, Runnable action) {
        Thread eventThread = c.backend().eventThread();
        for (int attempt = 0; attempt < 1000; attempt++) {
            AtomicBoolean ran = new AtomicBoolean();
            CompletableFuture<Void> f = c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM).thenRun(() -> {
                if (Thread.currentThread() != eventThread) return;
                ran.set(true);
                action.run();
            });
            if (ran.get() || !f.isDone()) return;
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
