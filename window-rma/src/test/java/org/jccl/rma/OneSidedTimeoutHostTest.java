package org.jccl.rma;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One-sided calls that wait on peers which never answer, on host ranks of this JVM: each ends under the
 * communicator's own timeout ({@code jccl.timeout}, here a fraction of a second) with a {@link WorkTimeoutException}
 * that says what this rank waits for — not the creation timeout, and not a guess at an ordering mistake.
 */
class OneSidedTimeoutHostTest {
    private static final Duration SHORT = Duration.ofMillis(400);
    private static final Duration LONG = Duration.ofMinutes(5);
    private final Backend backend = Jccl.backend(BackendKind.HOST);
    private final List<Communicator> comms = new ArrayList<>();
    private final List<Buffer> buffers = new ArrayList<>();

    @AfterEach
    void close() {
        for (Communicator c : comms) c.abort().exceptionally(e -> null).join();
        for (Buffer b : buffers) b.close();
    }

    /** Ranks of one communicator, each with its own work timeout. */
    private List<Communicator> ranks(Duration... timeouts) throws Exception {
        UniqueId id = backend.newUniqueId();
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < timeouts.length; r++) {
            joining.add(backend.initRank(id, timeouts.length, r, -1, CommConfig.DEFAULT,
                    CommOptions.defaults().withTimeout(timeouts[r])));
        }
        for (CompletableFuture<Communicator> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        return comms;
    }

    private Buffer buffer(Communicator c) {
        Buffer b = backend.allocate(c.device(), 64);
        buffers.add(b);
        return b;
    }

    private static JcclException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return assertInstanceOf(JcclException.class, e.getCause());
    }

    /**
     * Rank 1's group {allReduce, waitSignal from rank 0}, rank 0's allReduce then signal: the grouped wait holds rank
     * 1's all-reduce, which rank 0's all-reduce waits for, which holds rank 0's signal (NCCL 2.29.7 deadlocks alike).
     * The timeout names the grouped wait and the signal it lacks.
     */
    @Test
    void aGroupedWaitHoldingItsCollectiveTimesOutNamingTheWaitAndTheSignal() throws Exception {
        List<Communicator> c = ranks(LONG, SHORT);
        Work zeroReduces = c.get(0).allReduce(buffer(c.get(0)), buffer(c.get(0)), 4, DataType.FLOAT32, ReduceOp.SUM);
        Work zeroSignals = OneSided.of(c.get(0)).signal(1);
        Work group = Group.create().add(c.get(1), Operation.allReduce(buffer(c.get(1)), buffer(c.get(1)), 4, DataType.FLOAT32,
                        ReduceOp.SUM))
                .add(c.get(1), OneSided.of(c.get(1)).waitSignalOperation(SignalWait.of(0, 1))).submit();

        JcclException e = failure(group);
        assertInstanceOf(WorkTimeoutException.class, e, e.getMessage());
        String m = e.getMessage();
        assertTrue(m.contains("waitSignal for 1 more of signal 0 (context 0) from rank 0"), m);
        assertTrue(m.contains("issued in a group") && m.contains("holds the group's collectives"), m);
        assertFalse(m.contains("same order"), m);
        // Rank 1's timeout aborted it; rank 0, released by the abort, fails typed too.
        failure(zeroReduces);
        failure(zeroSignals);
    }

    @Test
    void aWaitForASignalNeverSentTimesOutNamingIt() throws Exception {
        List<Communicator> c = ranks(LONG, SHORT);
        JcclException e = failure(OneSided.of(c.get(1)).waitSignal(SignalWait.of(0, 2)));
        assertInstanceOf(WorkTimeoutException.class, e, e.getMessage());
        assertTrue(e.getMessage().contains("waitSignal for 2 more of signal 0 (context 0) from rank 0, which has not sent it"),
                e.getMessage());
        assertFalse(e.getMessage().contains("group"), e.getMessage());
    }

    /**
     * A window registered on one rank only waited for the creation timeout (jccl.host.initTimeout, 5 minutes) and
     * ended in a SystemErrorException. It ends under the communicator's timeout, naming the ranks that never
     * registered, and the communicator is aborted (its policy), which ends the registration's wait.
     */
    @Test
    void aWindowRegisteredOnOneRankOnlyTimesOutNamingTheRanksThatNeverRegistered() throws Exception {
        List<Communicator> c = ranks(SHORT, LONG, LONG);
        OneSided rma = OneSided.of(c.get(0));
        Buffer memory = rma.allocate(4096);
        buffers.add(memory);
        JcclException e = failure(rma.register(memory, WindowFlag.COLL_SYMMETRIC));
        assertInstanceOf(WorkTimeoutException.class, e, e.getMessage());
        assertTrue(e.getMessage().contains("registering window 0"), e.getMessage());
        assertTrue(e.getMessage().contains("ranks 1, 2 have not made this call"), e.getMessage());
        await().atMost(Duration.ofSeconds(30)).until(() -> c.get(0).failure() != null);
        assertTrue(rma.windows().isEmpty());
    }
}
