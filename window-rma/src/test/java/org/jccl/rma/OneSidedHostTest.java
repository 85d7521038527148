package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.reactive.ReactiveOneSided;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Windows and one-sided operations on the host backend: three ranks as threads of this JVM. */
class OneSidedHostTest {
    static final int RANKS = 3;
    static final long BYTES = 1 << 16;
    Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms;
    List<Window> windows;

    @BeforeEach
    void open() throws Exception {
        comms = backend.initAll(RANKS).get(30, TimeUnit.SECONDS);
        windows = register(BYTES);
    }

    @AfterEach
    void close() throws Exception {
        OneSided.closeAll(windows).get(30, TimeUnit.SECONDS);
        comms.forEach(Communicator::close);
    }

    /** Every rank of this process registers at once (waiting for one rank first would wait forever). */
    List<Window> register(long bytes) throws Exception {
        return OneSided.registerAll(comms, bytes, WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
    }

    @Test
    void windowsOfEveryRankAreRegisteredAndClosedTogether() throws Exception {
        List<Window> more = register(4096);
        for (int r = 0; r < RANKS; r++) {
            assertEquals(comms.get(r), more.get(r).communicator());
            assertTrue(rma(r).windows().contains(more.get(r)));
        }
        OneSided.closeAll(more).get(30, TimeUnit.SECONDS);
        for (int r = 0; r < RANKS; r++) {
            assertTrue(more.get(r).isClosed());
            assertTrue(more.get(r).buffer().isClosed(), "closeAll frees the memory registerAll allocated");
            assertFalse(rma(r).windows().contains(more.get(r)));
        }
    }

    @Test
    void ranksThatDisagreeOnAWindowsSizeAllFailAndKeepNoWindow() throws Exception {
        List<CompletableFuture<Window>> registering = new ArrayList<>();
        List<Buffer> memory = new ArrayList<>();
        for (int r = 0; r < RANKS; r++) {
            Buffer b = rma(r).allocate(r == 1 ? 8192 : 4096);
            memory.add(b);
            registering.add(rma(r).register(b, WindowFlag.COLL_SYMMETRIC));
        }
        for (CompletableFuture<Window> f : registering) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof InvalidUsageException, String.valueOf(e.getCause()));
        }
        for (int r = 0; r < RANKS; r++) assertEquals(List.of(windows.get(r)), rma(r).windows());
        memory.forEach(Buffer::close);
        // the failed window left nothing behind: the next one registers, and a put into it lands
        List<Window> next = register(4096);
        next.get(0).buffer().write(0, new int[] {42});
        await(rma(0).putSignal(next.get(0), next.get(0).buffer().slice(0, 4), 1, DataType.INT32, 2, 8),
                rma(2).waitSignal(SignalWait.of(0, 1)));
        assertArrayEquals(new int[] {42}, next.get(2).buffer().readInts(8, 1));
        OneSided.closeAll(next).get(30, TimeUnit.SECONDS);
    }

    OneSided rma(int rank) {
        return OneSided.of(comms.get(rank));
    }

    static void await(Work... works) throws Exception {
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
    }

    @Test
    void putsLandAtRandomOffsetsAndAreVisibleAfterTheWait() throws Exception {
        Random random = new Random(11);
        for (int round = 0; round < 20; round++) {
            int from = random.nextInt(RANKS);
            int to = random.nextInt(RANKS); // self-puts included
            int n = 1 + random.nextInt(1000);
            long offset = 4L * random.nextInt((int) (BYTES / 2 / 4) - n);
            int[] data = random.ints(n).toArray();
            Buffer source = windows.get(from).buffer().slice(BYTES / 2, 4L * n);
            source.write(0, data);
            Work put = rma(from).putSignal(windows.get(from), source, n, DataType.INT32, to, offset);
            await(rma(to).waitSignal(SignalWait.of(from, 1)), put);
            assertArrayEquals(data, windows.get(to).buffer().readInts(offset, n), "round " + round);
        }
    }

    @Test
    void signalIndicesAreCountedSeparatelyAndWaitsCoverSeveralPeers() throws Exception {
        await(rma(1).signal(0, 2, 0), rma(2).signal(0, 2, 0), rma(2).signal(0, 1, 0), rma(2).signal(0), rma(2).signal(0, 2, 1));
        Work w = rma(0).waitSignal(new SignalWait(1, 1, 2, 0), new SignalWait(2, 1, 2, 0), new SignalWait(2, 1, 1, 0),
                SignalWait.of(2, 1), new SignalWait(2, 1, 2, 1));
        await(w);
        // each (peer, index, context) counted alone: a signal on context 1 does not satisfy a wait on context 0
        await(rma(1).signal(0, 3, 1));
        Work other = rma(0).waitSignal(new SignalWait(1, 1, 3, 0));
        org.awaitility.Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !other.isDone());
        await(rma(1).signal(0, 3, 0));
        await(other, rma(0).waitSignal(new SignalWait(1, 1, 3, 1)));
        // cumulative: a wait issued before its signals completes once they arrive
        Work pending = rma(0).waitSignal(SignalWait.of(1, 2));
        await(rma(1).signal(0));
        await(rma(1).signal(0));
        await(pending);
    }

    @Test
    void aGroupMixesOneSidedOperationsWithACollective() throws Exception {
        List<Buffer> sums = new ArrayList<>();
        Group g = Group.create();
        for (Communicator c : comms) {
            Buffer b = backend.allocate(c.device(), 16);
            b.write(0, new float[] {c.rank(), 1, 2, 3});
            sums.add(b);
            g.add(c, Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM));
        }
        Buffer source = windows.get(0).buffer().slice(0, 12);
        source.write(0, new int[] {7, 8, 9});
        g.add(comms.get(2), rma(2).waitSignalOperation(SignalWait.of(0, 1)));
        g.add(comms.get(0), rma(0).putSignalOperation(windows.get(0), source, 3, DataType.INT32, 2, 100, 0, 0));
        await(g.submit());
        assertArrayEquals(new int[] {7, 8, 9}, windows.get(2).buffer().readInts(100, 3));
        assertArrayEquals(new float[] {3, 3, 6, 9}, sums.get(1).readFloats(0, 4));
    }

    @Test
    void theReactiveShapeIssuesAtSubscription() throws Exception {
        ReactiveOneSided r0 = ReactiveOneSided.of(ReactiveCommunicator.of(comms.get(0)));
        ReactiveOneSided r1 = ReactiveOneSided.of(ReactiveCommunicator.of(comms.get(1)));
        Buffer source = windows.get(0).buffer().slice(0, 8);
        source.write(0, new long[] {0x1234_5678_9abcL});
        var put = r0.putSignal(windows.get(0), source, 1, DataType.INT64, 1, 8);
        assertEquals(0, windows.get(1).buffer().readLongs(8, 1)[0], "cold: nothing issued before subscription");
        put.then(r1.waitSignal(SignalWait.of(0, 1))).block(java.time.Duration.ofSeconds(30));
        assertEquals(0x1234_5678_9abcL, windows.get(1).buffer().readLongs(8, 1)[0]);
    }

    @Test
    void badArgumentsThrowBeforeAnythingIsEnqueued() throws Exception {
        OneSided r = rma(0);
        Window w = windows.get(0);
        Buffer inside = w.buffer().slice(0, 64);
        Buffer outside = backend.allocate(comms.get(0).device(), 64);
        long issued = comms.get(0).pendingCount();
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 16, DataType.FLOAT32, 1, BYTES - 32));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 17, DataType.FLOAT32, 1, 0));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, -1, DataType.FLOAT32, 1, 0));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 1, DataType.FLOAT32, RANKS, 0));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 1, DataType.FLOAT32, 1, 0, 4, 0));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 1, DataType.FLOAT32, 1, 0, 0, 2));
        InvalidArgumentException notInWindow = assertThrows(InvalidArgumentException.class,
                () -> r.putSignal(w, outside, 1, DataType.FLOAT32, 1, 0));
        assertTrue(notInWindow.getMessage().contains("COLL_SYMMETRIC"), notInWindow.getMessage());
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(windows.get(1), inside, 1, DataType.FLOAT32, 1, 0));
        assertThrows(InvalidArgumentException.class, () -> r.waitSignal(SignalWait.of(1, 0)));
        assertThrows(InvalidArgumentException.class, () -> r.waitSignal());
        assertThrows(InvalidArgumentException.class, () -> r.signal(-1));
        assertThrows(InvalidArgumentException.class, () -> r.register(w.buffer().slice(8, 4096)));
        assertThrows(InvalidArgumentException.class, () -> r.putSignal(null, inside, 1, DataType.FLOAT32, 1, 0));
        assertEquals(issued, comms.get(0).pendingCount());
        outside.close();
    }

    /** Counts whose byte size wraps and offsets at the edges of a long are refused, typed; puts still work after. */
    @Test
    void extremeCountsAndOffsetsAreRefusedAndPutsStillWork() throws Exception {
        OneSided r = rma(0);
        Window w = windows.get(0);
        Buffer inside = w.buffer().slice(0, 64);
        long issued = comms.get(0).pendingCount();
        for (long count : new long[] {Long.MAX_VALUE, Long.MAX_VALUE / 8 + 1, Long.MIN_VALUE, (1L << 62) / 4, BYTES + 1}) {
            for (DataType type : new DataType[] {DataType.INT8, DataType.FLOAT32, DataType.FLOAT64}) {
                assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, count, type, 1, 0));
            }
        }
        for (long offset : new long[] {-1, Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE - 3, BYTES, BYTES - 3}) {
            assertThrows(InvalidArgumentException.class, () -> r.putSignal(w, inside, 1, DataType.FLOAT32, 1, offset));
        }
        assertEquals(issued, comms.get(0).pendingCount());
        Buffer source = w.buffer().slice(0, 8);
        source.write(0, new long[] {42});
        await(r.putSignal(w, source, 1, DataType.INT64, 1, BYTES - 8), rma(1).waitSignal(SignalWait.of(0, 1)));
        assertEquals(42, windows.get(1).buffer().readLongs(BYTES - 8, 1)[0]);
    }

    @Test
    void aClosedWindowRefusesPutsAndWindowsOfDifferentSizesAreRefusedOnEveryRank() throws Exception {
        List<Window> extra = register(8192);
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Window w : extra) closing.add(w.closeAsync());
        for (CompletableFuture<Void> f : closing) f.get(30, TimeUnit.SECONDS);
        Buffer inside = windows.get(0).buffer().slice(0, 8);
        assertThrows(InvalidUsageException.class, () -> rma(0).putSignal(extra.get(0), inside, 1, DataType.INT64, 1, 0));
        List<CompletableFuture<Window>> mismatched = new ArrayList<>();
        for (Communicator c : comms) mismatched.add(OneSided.of(c).register(OneSided.of(c).allocate(4096L * (1 + c.rank()))));
        for (CompletableFuture<Window> f : mismatched) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof InvalidUsageException, String.valueOf(e.getCause()));
        }
        assertEquals(Arrays.asList(windows.get(0)), rma(0).windows());
    }
}
