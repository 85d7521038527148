package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Steps on the host backend, which re-issues their operations: the same results, order and lifecycle as a graph. */
class StepHostTest {
    final Backend host = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms;
    final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        comms = host.initAll(2).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
        comms.forEach(Communicator::close);
    }

    private Buffer buffer(float... values) {
        Buffer b = host.allocate(-1, 4L * values.length);
        b.write(0, values);
        opened.add(b);
        return b;
    }

    private List<Step> build(List<Step.Builder> builders) throws Exception {
        List<Step> steps = new ArrayList<>();
        for (Step.Builder b : builders) {
            Step s = b.build().get(30, TimeUnit.SECONDS);
            opened.add(s);
            steps.add(s);
        }
        return steps;
    }

    private static void replayAll(List<Step> steps) throws Exception {
        List<CompletableFuture<?>> works = new ArrayList<>();
        for (Step s : steps) works.add(s.replay());
        CompletableFuture.allOf(works.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
    }

    /** A module's operation: zeroes the second float of {@code b}. */
    private static StreamOperation zeroSecond(Communicator c, Buffer b) {
        ModuleContext context = Modules.context(c);
        MemoryRef ref = context.memory(b);
        return new StreamOperation("zeroSecond()", List.of(b), stream -> context.driver().memsetAsync(ref.block(), ref.offset() + 4, 0, 4, stream));
    }

    @Test
    void replaysRunTheOperationsInOrderEachTime() throws Exception {
        List<Buffer> data = List.of(buffer(1, 5), buffer(2, 7));
        List<Step.Builder> builders = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Buffer b = data.get(r);
            builders.add(Step.builder(comms.get(r))
                    .add(Operation.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM))
                    .add(zeroSecond(comms.get(r), b))
                    .add(Operation.broadcast(b, b, 2, DataType.FLOAT32, 1)));
        }
        List<Step> steps = build(builders);
        assertFalse(steps.get(0).isCaptured(), "the host backend re-issues");
        float a = 1 + 2;
        for (int i = 0; i < 5; i++) {
            replayAll(steps);
            // all-reduce sums, the module zeroes the second value, the broadcast copies rank 1's
            assertArrayEquals(new float[] {a, 0}, data.get(0).readFloats(0, 2), "replay " + i);
            assertArrayEquals(new float[] {a, 0}, data.get(1).readFloats(0, 2));
            a *= 2;
        }
    }

    @Test
    void aGroupInsideAStepSendsAndReceives() throws Exception {
        List<Buffer> out = List.of(buffer(10), buffer(20));
        List<Buffer> in = List.of(buffer(0), buffer(0));
        List<Step.Builder> builders = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int peer = 1 - r;
            builders.add(Step.builder(comms.get(r)).group(List.of(Operation.recv(in.get(r), 1, DataType.FLOAT32, peer),
                    Operation.send(out.get(r), 1, DataType.FLOAT32, peer))));
        }
        replayAll(build(builders));
        assertArrayEquals(new float[] {20}, in.get(0).readFloats(0, 1));
        assertArrayEquals(new float[] {10}, in.get(1).readFloats(0, 1));
    }

    @Test
    void closedStepsClosedBuffersAndBadOperationsAreRefused() throws Exception {
        Buffer b = buffer(1, 2);
        Buffer small = buffer(1);
        assertThrows(InvalidArgumentException.class, () -> Step.builder(comms.get(0))
                .add(Operation.allReduce(small, small, 2, DataType.FLOAT32, ReduceOp.SUM)));
        assertThrows(InvalidArgumentException.class, () -> Step.builder(comms.get(0)).build());
        assertThrows(InvalidArgumentException.class, () -> Step.builder(comms.get(0)).group(List.of()));
        Step step = Step.builder(comms.get(0)).add(zeroSecond(comms.get(0), b)).buildReissued().get(30, TimeUnit.SECONDS);
        step.replay().get(30, TimeUnit.SECONDS);
        assertArrayEquals(new float[] {1, 0}, b.readFloats(0, 2));
        Buffer scratch = buffer(3, 4);
        Step onScratch = Step.builder(comms.get(0)).add(zeroSecond(comms.get(0), scratch)).buildReissued().get(30, TimeUnit.SECONDS);
        scratch.close();
        InvalidUsageException closedBuffer = assertThrows(InvalidUsageException.class, onScratch::replay);
        assertTrue(closedBuffer.getMessage().contains("closed"), closedBuffer.getMessage());
        onScratch.close();
        step.close();
        assertThrows(InvalidUsageException.class, step::replay);
        step.closeAsync().get(30, TimeUnit.SECONDS); // idempotent
    }
}
