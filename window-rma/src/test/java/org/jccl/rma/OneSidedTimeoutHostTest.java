package org.jccl.rma;

import static org.awaitility.Awaitility.await;
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
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
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

    private static JcclException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return assertInstanceOf(JcclException.class, e.getCause());
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
