package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Steps over several communicators on the host backend, whose streams are threads of their own: call order holds
 * across the streams (between a step's operations, and between a replay and the communicators' other work), and a
 * group of several communicators inside a step runs its members side by side. Order is seen in data: a flag set on
 * one stream after a long copy, read on another; read out of order, it is still 0.
 */
class StepAcrossCommunicatorsHostTest {
    /** A copy this long takes milliseconds on the host, where an unordered stream's next task takes microseconds. */
    private static final long SLOW_BYTES = 64L << 20;
    final Backend host = Jccl.backend(BackendKind.HOST);
    final List<AutoCloseable> opened = new ArrayList<>();
    Communicator x;
    Communicator y;

    @BeforeEach
    void open() throws Exception {
        x = host.initAll(1).get(30, TimeUnit.SECONDS).get(0); // two cliques of one rank: two streams, no peers
        y = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
        x.close();
        y.close();
    }

    private Buffer buffer(long bytes) {
        Buffer b = host.allocate(-1, bytes);
        opened.add(b);
        b.write(0, ByteBuffer.allocate((int) Math.min(bytes, 1 << 20))); // zeroes where it matters
        return b;
    }

    private static byte byteAt(Buffer b) {
        ByteBuffer one = ByteBuffer.allocate(1);
        b.read(0, one);
        return one.get(0);
    }

    /** Copies {@code bytes} of {@code from} into {@code to} on {@code c}'s stream. */
    private static StreamOperation copy(Communicator c, Buffer from, Buffer to, long bytes) {
        ModuleContext context = Modules.context(c);
        MemoryRef src = context.memory(from);
        MemoryRef dst = context.memory(to);
        return new StreamOperation("copy()", List.of(from, to),
                stream -> context.driver().copyAsync(dst.block(), dst.offset(), src.block(), src.offset(), bytes, stream));
    }

    /** Sets the first byte of {@code b} to {@code value} on {@code c}'s stream. */
    private static StreamOperation set(Communicator c, Buffer b, int value) {
        ModuleContext context = Modules.context(c);
        MemoryRef ref = context.memory(b);
        return new StreamOperation("set()", List.of(b), stream -> context.driver().memsetAsync(ref.block(), ref.offset(), value, 1, stream));
    }

    private Step built(Step.Builder builder) throws Exception {
        Step s = builder.build().get(30, TimeUnit.SECONDS);
        opened.add(s);
        return s;
    }

    @Test
    void operationsOnAnotherCommunicatorWaitForThoseAddedBefore() throws Exception {
        Buffer big = buffer(SLOW_BYTES);
        Buffer bigCopy = buffer(SLOW_BYTES);
        Buffer flag = buffer(1);
        Buffer seen = buffer(1);
        Step step = built(Step.builder(x).add(copy(x, big, bigCopy, SLOW_BYTES)).add(set(x, flag, 1)).add(y, copy(y, flag, seen, 1)));
        assertEquals(List.of(x, y), step.communicators());
        for (int i = 0; i < 3; i++) {
            flag.write(0, ByteBuffer.allocate(1));
            seen.write(0, ByteBuffer.allocate(1));
            step.replay().get(30, TimeUnit.SECONDS);
            assertEquals(1, byteAt(seen), "replay " + i + ": y read the flag before x set it");
        }
    }

    @Test
    void aReplayFollowsEveryCommunicatorsEarlierWorkAndPrecedesItsLater() throws Exception {
        Buffer big = buffer(SLOW_BYTES);
        Buffer bigCopy = buffer(SLOW_BYTES);
        Buffer setOnY = buffer(1);
        Buffer seenByStep = buffer(1);
        Buffer setByStep = buffer(1);
        Buffer seenLater = buffer(1);
        // The step reads on x what y's earlier work wrote, and its last operations (on x alone) write what y reads later.
        Step step = built(Step.builder(x).add(copy(x, setOnY, seenByStep, 1)).add(y, set(y, big, 0))
                .add(copy(x, big, bigCopy, SLOW_BYTES)).add(set(x, setByStep, 7)));
        Work earlier = Group.create().add(y, copy(y, bigCopy, big, SLOW_BYTES)).add(y, set(y, setOnY, 5)).submit();
        Work replay = step.replay();
        Work later = Group.create().add(y, copy(y, setByStep, seenLater, 1)).submit();
        for (Work w : List.of(earlier, replay, later)) w.get(30, TimeUnit.SECONDS);
        assertEquals(5, byteAt(seenByStep), "the step ran before y's earlier work was done");
        assertEquals(7, byteAt(seenLater), "y's later work ran before the step was done");
    }

    @Test
    void aGroupOfSeveralCommunicatorsRunsItsMembersSideBySide() throws Exception {
        List<Communicator> pair = host.initAll(2).get(30, TimeUnit.SECONDS);
        try {
            List<Buffer> data = new ArrayList<>();
            for (float[] v : new float[][] {{1, 2}, {3, 4}}) {
                Buffer b = buffer(8);
                b.write(0, v);
                data.add(b);
            }
            Group sum = Group.create();
            Group fromOne = Group.create();
            for (int r = 0; r < 2; r++) {
                Buffer b = data.get(r);
                sum.add(pair.get(r), Operation.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
                fromOne.add(pair.get(r), Operation.broadcast(b, b, 1, DataType.FLOAT32, 1));
            }
            // One thread issues both ranks: only a group lets them meet. Between the groups rank 0 alone zeroes its
            // second value, which the broadcast of one value leaves alone.
            ModuleContext context = Modules.context(pair.get(0));
            MemoryRef second = context.memory(data.get(0));
            StreamOperation zeroSecond = new StreamOperation("zeroSecond()", List.of(data.get(0)),
                    stream -> context.driver().memsetAsync(second.block(), second.offset() + 4, 0, 4, stream));
            Step step = built(Step.builder(pair.get(0)).group(sum).add(zeroSecond).group(fromOne));
            float first = 4;
            for (int i = 0; i < 3; i++) {
                step.replay().get(30, TimeUnit.SECONDS);
                assertArrayEquals(new float[] {first, 0}, data.get(0).readFloats(0, 2), "replay " + i);
                assertArrayEquals(new float[] {first, 6}, data.get(1).readFloats(0, 2)); // 2 + 4, then 0 + 6
                first *= 2;
            }
        } finally {
            for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
            opened.clear();
            pair.forEach(Communicator::close);
        }
    }

    @Test
    void aClosedCommunicatorIsRefusedWhenAdded() throws Exception {
        Communicator gone = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        Buffer flag = buffer(1);
        StreamOperation op = set(gone, flag, 1);
        gone.close();
        assertThrows(InvalidUsageException.class, () -> Step.builder(x).add(gone, op));
    }
}
