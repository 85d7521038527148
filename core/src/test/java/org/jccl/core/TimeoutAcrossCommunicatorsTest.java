package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.JcclException;
import org.junit.jupiter.api.Test;

/**
 * A work over several communicators that passes its deadline aborts each of them under the abort policy, whichever
 * one's deadline check saw it first: a group (or step) may be stuck on any of them, and a communicator left open
 * would keep what the work started on its stream waiting forever (found by {@link StepChaosTest}).
 */
class TimeoutAcrossCommunicatorsTest {
    @Test
    void aGroupOverTwoCliquesThatTimesOutAbortsBoth() throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        CommOptions options = CommOptions.defaults().withTimeout(Duration.ofMillis(300));
        List<Communicator> pair = host.initAll(new int[2], options).get(30, TimeUnit.SECONDS); // rank 1 never takes part
        Communicator solo = host.initAll(new int[1], options).get(30, TimeUnit.SECONDS).get(0);
        try (Buffer a = host.allocate(-1, 8); Buffer s = host.allocate(-1, 8)) {
            Work w = Group.create()
                    .add(pair.get(0), Operation.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM))
                    .add(solo, Operation.allReduce(s, s, 2, DataType.FLOAT32, ReduceOp.SUM))
                    .submit();
            ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS));
            assertInstanceOf(JcclException.class, e.getCause());
            await().atMost(Duration.ofSeconds(10)).until(() -> !pair.get(0).isOpen() && !solo.isOpen());
            // Aborted, rank 0's stream no longer waits for rank 1: its close does not wait for the stuck all-reduce.
            pair.get(0).closeAsync().get(10, TimeUnit.SECONDS);
        } finally {
            solo.close();
            pair.forEach(Communicator::close);
        }
    }
}
