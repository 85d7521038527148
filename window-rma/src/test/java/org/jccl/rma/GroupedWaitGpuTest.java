package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The deadlock a grouped wait makes by design, on NCCL (2.29.2+, two GPUs, one process): rank 1 groups an all-reduce
 * with a wait for rank 0's signal, rank 0 issues its all-reduce and only then the signal. NCCL's group end on rank 1
 * does not return, so its launch thread is stuck inside the library. What jccl promises all the same: rank 1's work
 * fails at its own timeout with {@link WorkTimeoutException} naming the group, its communicator is aborted although
 * the launch thread is inside {@code ncclGroupEnd}, and rank 0, aborted in turn, fails typed; nothing hangs.
 */
@Tag("gpu")
class GroupedWaitGpuTest {
    private static final Duration SHORT = Duration.ofSeconds(3);
    private static final Duration LONG = Duration.ofMinutes(5);
    private final Backend backend = Jccl.backend(BackendKind.NCCL);
    private final List<Communicator> comms = new ArrayList<>();
    private final List<Buffer> buffers = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (Communicator c : comms) c.abort().exceptionally(e -> null).get(120, TimeUnit.SECONDS);
        for (Buffer b : buffers) b.close();
    }

    @Test
    void aStuckGroupEndIsTimedOutAbortedAndReported() throws Exception {
        assumeTrue(backend.features().has(Feature.PUT_SIGNAL), "put/signal/wait need NCCL 2.29.2+, loaded " + backend.describe());
        assumeTrue(backend.deviceCount() >= 2, "needs 2 GPUs");
        UniqueId id = backend.newUniqueId();
        CompletableFuture<Communicator> zero = backend.initRank(id, 2, 0, 0, CommConfig.DEFAULT, CommOptions.defaults().withTimeout(LONG));
        CompletableFuture<Communicator> one = backend.initRank(id, 2, 1, 1, CommConfig.DEFAULT, CommOptions.defaults().withTimeout(SHORT));
        comms.add(zero.get(120, TimeUnit.SECONDS));
        comms.add(one.get(120, TimeUnit.SECONDS));
        Communicator c0 = comms.get(0);
        Communicator c1 = comms.get(1);

        Work zeroReduces = c0.allReduce(buffer(c0), buffer(c0), 4, DataType.FLOAT32, ReduceOp.SUM);
        Work zeroSignals = OneSided.of(c0).signal(1);
        Work group = Group.create()
                .add(c1, Operation.allReduce(buffer(c1), buffer(c1), 4, DataType.FLOAT32, ReduceOp.SUM))
                .add(c1, OneSided.of(c1).waitSignalOperation(SignalWait.of(0, 1))).submit();

        JcclException e = failure(group);
        assertInstanceOf(WorkTimeoutException.class, e, e.getMessage());
        assertTrue(e.getMessage().contains("group"), e.getMessage());
        // Rank 1's timeout aborts it; the abort must come back even with its launch thread inside ncclGroupEnd.
        c1.abort().exceptionally(x -> null).get(120, TimeUnit.SECONDS);
        // Rank 0 waits for a rank that is gone: aborting it fails its pending work typed.
        c0.abort().exceptionally(x -> null).get(120, TimeUnit.SECONDS);
        failure(zeroReduces);
        failure(zeroSignals);
    }

    private Buffer buffer(Communicator c) {
        Buffer b = backend.allocate(c.device(), 64);
        buffers.add(b);
        return b;
    }

    private static JcclException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(120, TimeUnit.SECONDS));
        return assertInstanceOf(JcclException.class, e.getCause());
    }
}
