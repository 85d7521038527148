package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.LifecycleCells.CELL_SECONDS;
import static org.jccl.core.LifecycleCells.settle;
import static org.jccl.core.LifecycleCells.walk;
import static org.jccl.core.host.HostTesting.host;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.spi.DriverConstants;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle table on host ranks: rank 0 of a two-rank communicator is brought into each state — open, closed,
 * aborted by itself, failed because its peer aborted, timed out (aborted by the engine) — and every call is made in
 * it (the host backend has no revoke or suspend: those calls are refused, typed, in every state). Each cell must end, within seconds, in a result, a typed {@link org.jccl.core.error.JcclException} thrown at once, or a
 * future failed with one: no call may hang or escape with an untyped exception. The table of outcomes is in the
 * failure message.
 */
class LifecycleTableTest {
    /** A state rank 0 is put in; the peer (rank 1) is left as the state leaves it. */
    private enum State {
        OPEN, CLOSED, ABORTED, PEER_ABORTED, TIMED_OUT
    }

    private record Pair(Communicator zero, Communicator one, Buffer b0, Buffer b1) {
    }

    @Test
    void everyCallCompletesInEveryState() throws Exception {
        Map<String, Function<Pair, CompletableFuture<?>>> calls = new LinkedHashMap<>();
        calls.put("allReduce (both ranks)", p -> CompletableFuture.allOf(
                p.zero().allReduce(p.b0(), p.b0(), 4, DataType.FLOAT32, ReduceOp.SUM),
                p.one().allReduce(p.b1(), p.b1(), 4, DataType.FLOAT32, ReduceOp.SUM)));
        calls.put("send (no matching recv)", p -> p.zero().send(p.b0(), 4, DataType.FLOAT32, 1));
        calls.put("split (both ranks)", p -> CompletableFuture.allOf(
                p.zero().split(0, 0).thenCompose(Communicator::closeAsync),
                p.one().split(0, 1).thenCompose(Communicator::closeAsync)));
        calls.put("shrink (rank 0 excludes rank 1)", p -> p.zero().shrink(new int[] {1}, CommConfig.DEFAULT, p.zero().options())
                .thenCompose(Communicator::closeAsync));
        calls.put("register", p -> p.zero().register(p.b0()).thenAccept(r -> r.close()));
        calls.put("createPreMulSum", p -> p.zero().createPreMulSum(2.0, DataType.FLOAT32));
        calls.put("revoke", p -> p.zero().revoke());
        calls.put("suspend", p -> p.zero().suspend());
        calls.put("memStats", p -> p.zero().memStats());
        calls.put("closeAsync", p -> p.zero().closeAsync());
        calls.put("abort", p -> p.zero().abort());
        calls.put("close (blocking)", p -> CompletableFuture.runAsync(() -> p.zero().close()));

        walk("host backend", State.values(), calls, LifecycleTableTest::pair, LifecycleTableTest::enter, LifecycleTableTest::release);
    }

    private static Pair pair() throws Exception {
        int[] devices = new int[2];
        Arrays.fill(devices, DriverConstants.HOST_DEVICE);
        CommOptions options = CommOptions.defaults().withTimeout(Duration.ofMillis(500)).withCloseTimeout(Duration.ofSeconds(2));
        List<Communicator> c = host().initAll(devices, options).get(30, TimeUnit.SECONDS);
        return new Pair(c.get(0), c.get(1), host().allocate(0, 64), host().allocate(0, 64));
    }

    private static void enter(State state, Pair p) throws Exception {
        switch (state) {
            case OPEN -> { }
            case CLOSED -> p.zero().closeAsync().get(CELL_SECONDS, TimeUnit.SECONDS);
            case ABORTED -> p.zero().abort().get(CELL_SECONDS, TimeUnit.SECONDS);
            case PEER_ABORTED -> p.one().abort().get(CELL_SECONDS, TimeUnit.SECONDS);
            case TIMED_OUT -> { // a lone collective times out and the engine aborts the communicator
                CompletableFuture<?> lone = p.zero().allReduce(p.b0(), p.b0(), 4, DataType.FLOAT32, ReduceOp.SUM);
                settle(lone);
                // The work fails first, then the engine aborts: wait for that, so the state is the same every run.
                await().atMost(Duration.ofSeconds(CELL_SECONDS)).until(() -> p.zero().failure() != null);
            }
        }
    }

    private static void release(Pair p) {
        for (Communicator c : List.of(p.zero(), p.one())) {
            settle(c.abort());
        }
        p.b0().close();
        p.b1().close();
    }
}
