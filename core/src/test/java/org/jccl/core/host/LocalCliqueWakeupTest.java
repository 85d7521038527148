package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.thread.Backoff;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Ranks of one JVM are woken by the rank they wait for, not by a timer: with parks of an hour and no spinning or
 * yielding, every wait below can only end through the peer's wake-up (or the poisoning's).
 */
class LocalCliqueWakeupTest {
    private static final Backoff HOUR_LONG_PARKS = new Backoff(0, 0, Duration.ofHours(1).toNanos());
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final LocalClique clique = new LocalClique(2, HOUR_LONG_PARKS);
    private final List<HostMemoryBlock> blocks = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    @AfterEach
    void release() throws InterruptedException {
        clique.poison("the test ended"); // no rank thread outlives the test, whatever it asserted
        for (Thread t : threads) t.join(WAIT.toMillis());
        for (HostMemoryBlock b : blocks) b.release();
    }

    @Test
    void aRankWaitingForItsPeerLeavesTheCollectiveWhenThePeerArrives() {
        HostOp rank0 = allReduce(0, 1f);
        HostOp rank1 = allReduce(1, 2f);
        CompletableFuture<Void> waiting = rank(() -> clique.collective(0, rank0));
        awaitParked();

        CompletableFuture<Void> arriving = rank(() -> clique.collective(1, rank1));

        await().atMost(WAIT).until(() -> waiting.isDone() && arriving.isDone());
        waiting.join();
        arriving.join();
        assertEquals(3f, rank0.recv.bytes().getFloat(0));
        assertEquals(3f, rank1.recv.bytes().getFloat(0));
    }

    @Test
    void aReceiveIsWokenByTheSendAndTheSendByTheReceive() {
        HostOp send = pointToPoint(0, OpKind.SEND, 1, 42f);
        HostOp recv = pointToPoint(1, OpKind.RECV, 0, 0f);
        CompletableFuture<Void> receiving = rank(() -> clique.receive(1, recv));
        awaitParked();

        Object posted = clique.postSend(0, send);
        await().atMost(WAIT).until(receiving::isDone);
        receiving.join();
        clique.awaitConsumed(0, posted); // returns: the receive marked it consumed and woke this thread
        assertEquals(42f, recv.recv.bytes().getFloat(0));
    }

    @Test
    void aWaitingRankFailsAsSoonAsTheCliqueIsPoisoned() {
        HostOp rank0 = allReduce(0, 1f);
        CompletableFuture<Void> waiting = rank(() -> clique.collective(0, rank0));
        awaitParked();

        clique.poison("rank 1 aborted");

        await().atMost(WAIT).until(waiting::isDone);
        Throwable failure = waiting.handle((ok, e) -> e).join();
        assertInstanceOf(CliqueFailedException.class, failure);
        assertTrue(failure.getMessage().contains("rank 1 aborted"), failure.getMessage());
    }

    /** Runs {@code body} on a thread of its own, as a rank's stream thread; the future completes with its outcome. */
    private CompletableFuture<Void> rank(Runnable body) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                body.run();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }, "rank-" + threads.size());
        t.setDaemon(true);
        threads.add(t);
        t.start();
        return done;
    }

    /** Waits until the last rank started is parked: in its hour-long park, since it neither spins nor yields. */
    private void awaitParked() {
        Thread t = threads.get(threads.size() - 1);
        await().atMost(WAIT).until(() -> t.getState() == Thread.State.TIMED_WAITING);
    }

    private HostOp allReduce(int rank, float value) {
        HostMemoryBlock send = block(value);
        HostMemoryBlock recv = block(0f);
        LaunchOp op = new LaunchOp(OpKind.ALL_REDUCE, 1, DataType.FLOAT32, Reduction.Kind.SUM.ordinal(), -1,
                new MemoryRef(send, 0), new MemoryRef(recv, 0), null, null);
        return new HostOp(new HostComm(clique, new Meetings(), rank), op, Reduction.builtIn(Reduction.Kind.SUM));
    }

    private HostOp pointToPoint(int rank, OpKind kind, int peer, float value) {
        HostMemoryBlock data = block(value);
        MemoryRef ref = new MemoryRef(data, 0);
        LaunchOp op = new LaunchOp(kind, 1, DataType.FLOAT32, LaunchOp.NO_REDUCTION, peer,
                kind == OpKind.SEND ? ref : null, kind == OpKind.RECV ? ref : null, null, null);
        return new HostOp(new HostComm(clique, new Meetings(), rank), op, null);
    }

    private HostMemoryBlock block(float value) {
        HostMemoryBlock b = HostMemoryBlock.allocate(Float.BYTES, MemoryKind.DEVICE);
        blocks.add(b);
        b.bytes().putFloat(0, value);
        return b;
    }
}
