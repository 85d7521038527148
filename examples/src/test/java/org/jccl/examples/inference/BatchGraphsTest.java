package org.jccl.examples.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Step;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The inference server's per-size step cache on one host rank (where a step re-issues its operations; the captured
 * graphs are the GPU run's): a size is captured after its first eager run only, replayed from then on, and a size whose
 * capture fails runs eagerly ever after; closing closes every step.
 */
class BatchGraphsTest {
    private final Backend host = Jccl.backend(BackendKind.HOST);
    private final Scheduler stepThread = Schedulers.newSingle("batch-graphs-test");
    private Communicator comm;
    private Buffer buffer;

    @BeforeEach
    void open() throws Exception {
        comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        buffer = host.allocate(-1, 4096);
    }

    @AfterEach
    void close() {
        buffer.close();
        comm.close();
        stepThread.dispose();
    }

    private BatchGraphs.Recipe allReduce(int n) {
        return new BatchGraphs.Recipe(Step.builder(comm).add(Operation.allReduce(buffer, buffer, n, DataType.FLOAT32, ReduceOp.SUM)), List.of());
    }

    @Test
    void aSizeIsCapturedAfterItsFirstRunAndReplayedFromThenOn() throws Exception {
        BatchGraphs graphs = new BatchGraphs();
        assertTrue(graphs.captureAfter(4), "the first eager run of a size is followed by its capture");
        assertFalse(graphs.captureAfter(4), "only the first");
        assertNull(graphs.step(4));
        graphs.capture(4, this::allReduce, stepThread).block();
        Step step = graphs.step(4);
        assertNotNull(step);
        buffer.write(0, new float[] {1f, 2f, 3f, 4f});
        step.replay().get(30, TimeUnit.SECONDS);
        assertEquals(2f, buffer.readFloats(0, 4)[1], "one rank: the sum is the value");
        assertNull(graphs.step(8), "other sizes are not captured");
        graphs.close();
        assertThrows(InvalidUsageException.class, step::replay, "closing closes every step");
        assertNull(graphs.step(4));
    }

    @Test
    void aSizeWhoseCaptureFailsRunsEagerlyEverAfter() throws Exception {
        BatchGraphs graphs = new BatchGraphs();
        assertTrue(graphs.captureAfter(2));
        graphs.capture(2, n -> {
            throw new IllegalStateException("no kernels today");
        }, stepThread).block();
        assertNull(graphs.step(2));
        assertFalse(graphs.captureAfter(2), "not tried again");
        // A step that cannot be built (no operations) is given up the same way, and never kills the batch.
        assertTrue(graphs.captureAfter(3));
        graphs.capture(3, n -> new BatchGraphs.Recipe(Step.builder(comm), List.of()), stepThread).block();
        assertNull(graphs.step(3));
        graphs.close();
    }
}
