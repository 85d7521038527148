package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
import org.jccl.core.Step;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The symmetric pool on three host ranks: deterministic offsets, collectives on its buffers, reuse, refusals, close. */
class SymmetricPoolHostTest {
    static final int RANKS = 3;
    final Backend host = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms;
    List<SymmetricPool> pools;

    @BeforeEach
    void open() throws Exception {
        comms = host.initAll(RANKS).get(30, TimeUnit.SECONDS);
        pools = SymmetricPool.createAll(comms, 10_000).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (SymmetricPool p : pools) closing.add(p.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        comms.forEach(Communicator::close);
    }

    /** Every rank allocates {@code bytes}; the buffers, which must lie at one offset on every rank. */
    List<Buffer> allocateEverywhere(long bytes) {
        List<Buffer> out = new ArrayList<>();
        for (SymmetricPool p : pools) out.add(p.allocate(bytes));
        for (int r = 1; r < RANKS; r++) assertEquals(pools.get(0).offsetOf(out.get(0)), pools.get(r).offsetOf(out.get(r)));
        return out;
    }

    @Test
    void theSameCallsGiveEveryRankTheSameOffsetsAndFreedRunsAreReusedFirstFit() {
        assertEquals(10_240, pools.get(0).byteSize(), "rounded up to the alignment");
        assertEquals(256 + 1024 + 512, SymmetricPool.bytesFor(100, 1000, 300), "what the three allocations below take");
        List<Buffer> a = allocateEverywhere(100);
        List<Buffer> b = allocateEverywhere(1000);
        List<Buffer> c = allocateEverywhere(300);
        assertEquals(List.of(0L, 256L, 1280L), List.of(pools.get(1).offsetOf(a.get(1)), pools.get(1).offsetOf(b.get(1)),
                pools.get(1).offsetOf(c.get(1))));
        assertEquals(100, a.get(0).byteSize(), "the buffer has the size asked for");
        assertEquals(10_240 - 256 - 1024 - 512, pools.get(2).freeBytes());
        b.forEach(Buffer::close);
        b.forEach(Buffer::close); // idempotent: the run is given back once
        assertEquals(10_240 - 256 - 512, pools.get(2).freeBytes());
        List<Buffer> d = allocateEverywhere(200);
        assertEquals(256, pools.get(0).offsetOf(d.get(0)), "the lowest run that fits");
        a.forEach(Buffer::close);
        List<Buffer> e = allocateEverywhere(512);
        assertEquals(512, pools.get(0).offsetOf(e.get(0)), "the lowest run that fits: 0..256 is too short");
        e.forEach(Buffer::close);
        d.forEach(Buffer::close);
        List<Buffer> f = allocateEverywhere(1280);
        assertEquals(0, pools.get(0).offsetOf(f.get(0)), "the freed neighbours merged into one run, 0..1280");
    }

    @Test
    void collectivesRunOnPoolBuffers() throws Exception {
        List<Buffer> x = allocateEverywhere(4 * 64);
        Group g = Group.create();
        for (int r = 0; r < RANKS; r++) {
            float[] v = new float[64];
            Arrays.fill(v, r + 1);
            x.get(r).write(0, v);
            g.add(comms.get(r), Operation.allReduce(x.get(r), x.get(r), 64, DataType.FLOAT32, ReduceOp.SUM));
        }
        g.submit().get(30, TimeUnit.SECONDS);
        float[] want = new float[64];
        Arrays.fill(want, 6f);
        for (Buffer b : x) assertArrayEquals(want, b.readFloats(0, 64));
    }

    @Test
    void badSizesAndAFullPoolAreRefusedTypedAndTakeNothing() {
        assertThrows(InvalidArgumentException.class, () -> pools.get(0).allocate(0));
        assertThrows(InvalidArgumentException.class, () -> pools.get(0).allocate(-5));
        pools.get(0).allocate(9000);
        InvalidUsageException full = assertThrows(InvalidUsageException.class, () -> pools.get(0).allocate(2000));
        assertTrue(full.getMessage().contains("no room for 2000 bytes") && full.getMessage().contains("longest free run is 1024"),
                full.getMessage());
        assertEquals(1024, pools.get(0).freeBytes(), "a refused allocation takes nothing");
        assertThrows(InvalidArgumentException.class, () -> SymmetricPool.create(comms.get(0), 0));
    }

    @Test
    void aClosedAllocationIsRefusedByOperationsAndByAStepHoldingIt() throws Exception {
        List<Buffer> x = allocateEverywhere(256);
        Step step = Step.builder(comms.get(0)).add(Operation.allReduce(x.get(0), x.get(0), 1, DataType.FLOAT32, ReduceOp.SUM))
                .buildReissued().get(30, TimeUnit.SECONDS);
        x.get(0).close();
        assertTrue(x.get(0).isClosed());
        assertFalse(pools.get(0).window().buffer().isClosed(), "the pool's memory is not the allocation's to close");
        assertThrows(InvalidUsageException.class, () -> comms.get(0).allReduce(x.get(0), x.get(0), 1, DataType.FLOAT32, ReduceOp.SUM));
        assertThrows(InvalidUsageException.class, step::replay);
        step.close();
    }

    @Test
    void closingThePoolClosesItsAllocationsAndDeregistersItsWindow() throws Exception {
        List<Buffer> x = allocateEverywhere(256);
        Window w = pools.get(0).window();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (SymmetricPool p : pools) closing.add(p.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        for (Buffer b : x) assertTrue(b.isClosed());
        assertTrue(w.isClosed() && w.buffer().isClosed());
        assertFalse(OneSided.of(comms.get(0)).windows().contains(w));
        assertThrows(InvalidUsageException.class, () -> pools.get(0).allocate(1));
        x.forEach(Buffer::close); // after the pool: nothing to give back, nothing thrown
    }

    @Test
    void threadsAllocatingAndClosingAtOnceLeaveTheWholePoolFreeAndInOneRun() throws Exception {
        SymmetricPool pool = pools.get(0);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int t = 0; t < 4; t++) {
            Random random = new Random(t);
            threads.add(new Thread(() -> {
                List<Buffer> held = new ArrayList<>();
                try {
                    for (int i = 0; i < 2000; i++) {
                        if (held.isEmpty() || random.nextBoolean()) {
                            try {
                                held.add(pool.allocate(1 + random.nextInt(600)));
                            } catch (InvalidUsageException full) { // the other threads hold the rest: give one back
                                if (!held.isEmpty()) held.remove(random.nextInt(held.size())).close();
                            }
                        } else {
                            held.remove(random.nextInt(held.size())).close();
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                } finally {
                    held.forEach(Buffer::close);
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) t.join(30_000);
        assertEquals(List.of(), failures);
        assertEquals(pool.byteSize(), pool.freeBytes(), "every byte given back");
        assertEquals(0, pool.offsetOf(pool.allocate(pool.byteSize())), "and merged into one run");
    }

    @Test
    void aBufferFromElsewhereHasNoOffsetInThePool() {
        try (Buffer other = host.allocate(-1, 64)) {
            assertThrows(InvalidArgumentException.class, () -> pools.get(0).offsetOf(other));
        }
        List<Buffer> x = allocateEverywhere(64);
        assertThrows(InvalidArgumentException.class, () -> pools.get(0).offsetOf(x.get(1)), "another rank's pool");
    }
}
