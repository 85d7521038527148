package org.jccl.core.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Step;
import org.jccl.core.TestAccess;
import org.jccl.core.engine.EventLoop;
import org.junit.jupiter.api.Test;

/**
 * The steady-state issue path allocates nothing: a step replayed with a {@link org.jccl.core.Completion}, counted by
 * the JVM's per-thread allocation counters on every thread the path runs on (the caller, the communicator's launch
 * thread, the event thread). One 16-byte object per replay would be 1.6 MB here; the bound leaves room only for what
 * reading the counters costs.
 */
class IssuePathAllocationTest {
    private static final int REPLAYS = 100_000;
    private static final long SLACK_BYTES = 16 * 1024;

    @Test
    void aStepReplayedWithACompletionAllocatesNothingPerReplay() {
        Backend backend = TestAccess.backend(new InstantDriver());
        Communicator comm = backend.initAll(1).join().get(0);
        try (Buffer buffer = backend.allocate(-1, 8);
             Step step = Step.builder(comm).add(Operation.allReduce(buffer, buffer, 2, DataType.FLOAT32, ReduceOp.SUM))
                     .build().join()) {
            IssuePathBenchmark.Completions completions = new IssuePathBenchmark.Completions();
            replay(step, completions, REPLAYS); // warm: the pool of replays filled, the code compiled
            long[] threads = pathThreads(comm);
            long before = allocated(threads);
            replay(step, completions, REPLAYS);
            long bytes = allocated(threads) - before;
            assertEquals(2L * REPLAYS, completions.done());
            assertTrue(bytes < SLACK_BYTES, bytes + " bytes allocated over " + REPLAYS + " replays ("
                    + (double) bytes / REPLAYS + " per replay) on the caller's, launch and event threads");
        } finally {
            comm.close();
        }
    }

    /** {@code n} replays, at most {@link IssuePathBenchmark#IN_FLIGHT} in flight, then waits for the last. */
    private static void replay(Step step, IssuePathBenchmark.Completions completions, int n) {
        long start = completions.done();
        for (int i = 0; i < n; i++) {
            completions.spinUntil(start + i - IssuePathBenchmark.IN_FLIGHT + 1);
            step.replay(completions);
        }
        completions.spinUntil(start + n);
    }

    private static long[] pathThreads(Communicator comm) {
        List<Long> ids = new ArrayList<>();
        ids.add(Thread.currentThread().getId());
        ids.add(EventLoop.get().thread().getId());
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("jccl-launch-" + comm.id())) ids.add(t.getId());
        }
        assertEquals(3, ids.size(), "the caller, the event thread and one launch thread");
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static long allocated(long[] threads) {
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long b : bean.getThreadAllocatedBytes(threads)) sum += b;
        return sum;
    }
}
