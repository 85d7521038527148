package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.CommunicatorAbortedException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The NCCL backend on two GPUs of one process, with real data checked on the host. */
@Tag("gpu")
class NcclSingleProcessGpuTest {
    static final int N = 1024;
    static Backend backend;

    @BeforeAll
    static void open() {
        backend = Jccl.backend(BackendKind.NCCL);
        assumeTrue(backend.deviceCount() >= 2, "needs two GPUs");
    }

    static Buffer floats(int device, float value) {
        Buffer b = backend.allocate(device, 4L * N);
        ByteBuffer data = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) data.putFloat(4 * i, value + i);
        b.write(0, data);
        return b;
    }

    static float[] read(Buffer b) {
        ByteBuffer data = ByteBuffer.allocate(4 * N).order(ByteOrder.nativeOrder());
        b.read(0, data);
        float[] out = new float[N];
        for (int i = 0; i < N; i++) out[i] = data.getFloat(4 * i);
        return out;
    }

    static void await(Work... works) throws Exception {
        for (Work w : works) w.get(60, TimeUnit.SECONDS);
    }

    @Test
    void collectivesOnBothCommunicators() throws Exception {
        List<Communicator> comms = backend.initAll(2).get(120, TimeUnit.SECONDS);
        List<Buffer> opened = new ArrayList<>();
        try {
            Buffer s0 = floats(0, 1);
            Buffer s1 = floats(1, 2);
            Buffer r0 = floats(0, 0);
            Buffer r1 = floats(1, 0);
            opened.addAll(List.of(s0, s1, r0, r1));
            await(comms.get(0).allReduce(s0, r0, N, DataType.FLOAT32, ReduceOp.SUM),
                    comms.get(1).allReduce(s1, r1, N, DataType.FLOAT32, ReduceOp.SUM));
            for (float[] got : new float[][] {read(r0), read(r1)}) {
                for (int i = 0; i < N; i++) assertEquals(3f + 2 * i, got[i], "allReduce element " + i);
            }

            await(comms.get(0).broadcast(s0, r0, N, DataType.FLOAT32, 1), comms.get(1).broadcast(s1, r1, N, DataType.FLOAT32, 1));
            for (float[] got : new float[][] {read(r0), read(r1)}) {
                for (int i = 0; i < N; i++) assertEquals(2f + i, got[i], "broadcast element " + i);
            }

            Buffer g0 = backend.allocate(0, 8L * N);
            Buffer g1 = backend.allocate(1, 8L * N);
            opened.addAll(List.of(g0, g1));
            await(comms.get(0).allGather(s0, g0, N, DataType.FLOAT32), comms.get(1).allGather(s1, g1, N, DataType.FLOAT32));
            ByteBuffer gathered = ByteBuffer.allocate(8 * N).order(ByteOrder.nativeOrder());
            g1.read(0, gathered);
            assertEquals(1f, gathered.getFloat(0));
            assertEquals(2f, gathered.getFloat(4 * N));

            await(comms.get(0).send(s0, N, DataType.FLOAT32, 1), comms.get(1).recv(r1, N, DataType.FLOAT32, 0));
            assertEquals(1f + 5, read(r1)[5]);
        } finally {
            opened.forEach(Buffer::close);
            comms.forEach(Communicator::close);
        }
    }

    @Test
    void splitWithAnExcludedRank() throws Exception {
        List<Communicator> comms = backend.initAll(2).get(120, TimeUnit.SECONDS);
        try {
            CompletableFuture<Communicator> child = comms.get(0).split(7, 0);
            CompletableFuture<Void> excluded = comms.get(1).splitExcluded();
            excluded.get(60, TimeUnit.SECONDS);
            try (Communicator alone = child.get(60, TimeUnit.SECONDS); Buffer s = floats(0, 4); Buffer r = floats(0, 0)) {
                assertEquals(1, alone.size());
                await(alone.allReduce(s, r, N, DataType.FLOAT32, ReduceOp.SUM));
                assertEquals(4f + 9, read(r)[9]);
            }
        } finally {
            comms.forEach(Communicator::close);
        }
    }

    @Test
    void abortFailsPendingWorkWithoutHanging() throws Exception {
        List<Communicator> comms = backend.initAll(2).get(120, TimeUnit.SECONDS);
        try (Buffer s = floats(0, 1); Buffer r = floats(0, 0)) {
            // Only rank 0 joins: the allReduce can never finish until the communicator is aborted.
            Work stuck = comms.get(0).allReduce(s, r, N, DataType.FLOAT32, ReduceOp.SUM);
            comms.get(0).abort().get(120, TimeUnit.SECONDS);
            ExecutionException e = assertThrows(ExecutionException.class, () -> stuck.get(60, TimeUnit.SECONDS));
            assertInstanceOf(CommunicatorAbortedException.class, e.getCause());
        } finally {
            comms.get(1).abort().get(120, TimeUnit.SECONDS);
        }
    }

    @Test
    void nonBlockingCreationCompletesThroughTheEventThread() throws Exception {
        UniqueId id = backend.newUniqueId();
        CommConfig config = CommConfig.builder().blocking(false).build();
        CompletableFuture<Communicator> f0 = backend.initRank(id, 2, 0, 0, config, org.jccl.core.CommOptions.defaults());
        CompletableFuture<Communicator> f1 = backend.initRank(id, 2, 1, 1, config, org.jccl.core.CommOptions.defaults());
        try (Communicator c0 = f0.get(120, TimeUnit.SECONDS); Communicator c1 = f1.get(120, TimeUnit.SECONDS);
             Buffer s0 = floats(0, 1); Buffer s1 = floats(1, 2); Buffer r0 = floats(0, 0); Buffer r1 = floats(1, 0)) {
            await(c0.allReduce(s0, r0, N, DataType.FLOAT32, ReduceOp.SUM), c1.allReduce(s1, r1, N, DataType.FLOAT32, ReduceOp.SUM));
            assertEquals(3f, read(r0)[0]);
            assertEquals(3f + 2 * 7, read(r1)[7]);
        }
    }
}
