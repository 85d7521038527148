package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.LifecycleCells.settle;
import static org.jccl.core.LifecycleCells.walk;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.jccl.core.engine.TestWorks;
import org.jccl.core.error.Errors;
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle table on the scripted driver, which can hold a communicator in states the host backend cannot reach:
 * closing with work pending, aborting while the library's abort hangs, revoked, suspended, failed by an async error.
 * Rank 0 of two is put in each state and every call is made in it; each cell must end within seconds in a result, a
 * typed exception thrown at once, or a future failed with one. The table of outcomes is printed and in the failure
 * message.
 */
class ScriptedLifecycleTableTest {
    /** Every optional function the calls below need, so that what is observed is the lifecycle, not a feature gap. */
    private static final Set<String> FUNCTIONS = Set.of(Feature.COMM_SHRINK.function(), Feature.COMM_GROW.function(),
            Feature.COMM_GET_UNIQUE_ID.function(), Feature.COMM_SUSPEND.function(), Feature.COMM_RESUME.function(),
            Feature.COMM_MEM_STATS.function(), Feature.COMM_REVOKE.function());
    private static String abortTimeoutBefore;

    private enum State {
        OPEN, CLOSING, CLOSED, ABORTING, ABORTED, REVOKED, SUSPENDED, FAILED, TIMED_OUT
    }

    /** One cell's world: a fresh driver, so that an async error or a hanging abort stays in its cell. */
    private record Cell(ScriptedDriver driver, Communicator zero, Communicator one, Buffer buffer) {
    }

    @BeforeAll
    static void shortAbortTimeout() {
        abortTimeoutBefore = System.getProperty("jccl.abortTimeout");
        System.setProperty("jccl.abortTimeout", "1s"); // a hanging abort must end the cell well within its limit
    }

    @AfterAll
    static void restoreAbortTimeout() {
        if (abortTimeoutBefore == null) System.clearProperty("jccl.abortTimeout");
        else System.setProperty("jccl.abortTimeout", abortTimeoutBefore);
    }

    @Test
    void everyCallCompletesInEveryState() throws Exception {
        Map<String, Function<Cell, CompletableFuture<?>>> calls = new LinkedHashMap<>();
        calls.put("allReduce", c -> c.zero().allReduce(c.buffer(), c.buffer(), 4, DataType.FLOAT32, ReduceOp.SUM));
        calls.put("copy on its stream", c -> c.zero().stream().copy(c.buffer(), c.buffer(), 16));
        calls.put("split", c -> c.zero().split(0, 0).thenCompose(Communicator::closeAsync));
        calls.put("splitExcluded", c -> c.zero().splitExcluded());
        calls.put("shrink", c -> c.zero().shrink(new int[] {1}, CommConfig.DEFAULT, c.zero().options())
                .thenCompose(Communicator::closeAsync));
        calls.put("grow", c -> c.zero().grow(3, null, CommConfig.DEFAULT, c.zero().options()).thenCompose(Communicator::closeAsync));
        calls.put("growUniqueId", c -> c.zero().growUniqueId());
        calls.put("register", c -> c.zero().register(c.buffer()).thenAccept(Registration::close));
        calls.put("createPreMulSum", c -> c.zero().createPreMulSum(2.0, DataType.FLOAT32));
        calls.put("revoke", c -> c.zero().revoke());
        calls.put("suspend", c -> c.zero().suspend());
        calls.put("resume", c -> c.zero().resume());
        calls.put("memStats", c -> c.zero().memStats());
        calls.put("closeAsync", c -> c.zero().closeAsync());
        calls.put("abort", c -> c.zero().abort());
        calls.put("close (blocking)", c -> CompletableFuture.runAsync(() -> c.zero().close()));

        walk("scripted driver", State.values(), calls, ScriptedLifecycleTableTest::cell, ScriptedLifecycleTableTest::enter,
                ScriptedLifecycleTableTest::release);
    }

    private static Cell cell() {
        ScriptedDriver driver = new ScriptedDriver();
        driver.functions = FUNCTIONS;
        driver.autoComplete = true;
        Backend backend = new Backend(driver);
        CommOptions options = CommOptions.defaults().withTimeout(Duration.ofMillis(200)).withCloseTimeout(Duration.ofSeconds(1));
        List<Communicator> c = backend.initAll(new int[] {-1, -1}, options).join();
        return new Cell(driver, c.get(0), c.get(1), backend.allocate(-1, 64));
    }

    private static void enter(State state, Cell c) {
        Communicator zero = c.zero();
        switch (state) {
            case OPEN -> { }
            case CLOSING -> { // a work whose event never completes holds the close in its drain
                c.driver().autoComplete = false;
                // Its timeout aborts the communicator, which ends the work (and any behind it on the stream) as on a GPU.
                c.driver().abortEndsWork = true;
                Work stuck = zero.allReduce(c.buffer(), c.buffer(), 4, DataType.FLOAT32, ReduceOp.SUM);
                // Recorded before completing becomes automatic again, or the work would complete and the close with it.
                await().atMost(Duration.ofSeconds(10)).until(() -> TestWorks.event(stuck) != null);
                zero.closeAsync();
                c.driver().autoComplete = true;
            }
            case CLOSED -> zero.close();
            case ABORTING -> { // the library's abort hangs: its future fails after jccl.abortTimeout, the rest goes on
                c.driver().abortGate = new CountDownLatch(1);
                zero.abort();
            }
            case ABORTED -> settle(zero.abort());
            case REVOKED -> settle(zero.revoke());
            case SUSPENDED -> settle(zero.suspend());
            case FAILED -> { // an async error seen while work is pending aborts the communicator
                c.driver().autoComplete = false;
                zero.allReduce(c.buffer(), c.buffer(), 4, DataType.FLOAT32, ReduceOp.SUM);
                c.driver().asyncError = Errors.REMOTE_ERROR;
                await().atMost(Duration.ofSeconds(10)).until(() -> zero.failure() != null);
                c.driver().autoComplete = true;
            }
            case TIMED_OUT -> { // a work whose event never completes passes its deadline: the engine aborts
                c.driver().autoComplete = false;
                settle(zero.allReduce(c.buffer(), c.buffer(), 4, DataType.FLOAT32, ReduceOp.SUM));
                await().atMost(Duration.ofSeconds(10)).until(() -> zero.failure() != null);
                c.driver().autoComplete = true;
            }
        }
    }

    private static void release(Cell c) {
        CountDownLatch gate = c.driver().abortGate;
        if (gate != null) gate.countDown();
        c.driver().done.addAll(c.driver().events.keySet());
        settle(c.zero().abort());
        settle(c.one().abort());
        c.buffer().close();
    }
}
