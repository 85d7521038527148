package org.jccl.reactive;

import static org.awaitility.Awaitility.await;
import static org.jccl.reactive.Ranks.WAIT;
import static org.jccl.reactive.Ranks.f32;
import static org.jccl.reactive.Ranks.filled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommOptions;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.RemoteErrorException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The reactive suite on the host backend with three ranks (ranks as threads of this JVM), plus host-only cases. */
class HostReactiveTest extends ReactiveSuite {
    @Override
    protected Backend backend() {
        return Jccl.backend(BackendKind.HOST);
    }

    @Override
    protected int ranks() {
        return 3;
    }

    /**
     * A peer's abort reaches this rank as the communicator's async error (the host backend reports it as a remote
     * error; NCCL in one process would hang until the timeout instead): every pending Mono fails with the typed
     * exception and the communicator is aborted.
     */
    @Test
    void anAsyncErrorFailsEveryPendingMonoWithItsType() {
        Ranks r = open();
        Buffer b = r.floats(0, filled(8, 1f));
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        for (int k = 0; k < 3; k++) r.comm(0).allReduce(b, b, 8, f32(), ReduceOp.SUM).subscribe(null, errors::add);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 3);

        StepVerifier.create(r.comm(1).abort()).expectComplete().verify(WAIT);

        await().atMost(WAIT).until(() -> errors.size() == 3);
        for (Throwable e : errors) assertInstanceOf(RemoteErrorException.class, e);
        for (int seq = 1; seq <= 3; seq++) {
            String named = "allReduce(seq=" + seq + ",";
            assertEquals(1, errors.stream().filter(e -> e.getMessage().contains(named)).count(), named + " in " + errors);
        }
        assertFalse(r.core(0).isOpen());
        StepVerifier.create(r.comm(0).allReduce(b, b, 8, f32(), ReduceOp.SUM)).expectError(RemoteErrorException.class).verify(WAIT);
    }

    @Test
    void nonBlockingCreationCompletesWhenTheEventThreadSeesItReady() {
        ReactiveBackend reactive = ReactiveBackend.of(backend());
        var id = backend().newUniqueId();
        CommConfig nonBlocking = CommConfig.builder().blocking(false).build();
        List<ReactiveCommunicator> comms = Flux.range(0, 2)
                .flatMap(i -> reactive.initRankScalable(List.of(id), 2, i, -1, nonBlocking, CommOptions.defaults()))
                .collectList().block(WAIT);
        try {
            assertEquals(2, comms.size());
            Buffer[] bufs = {backend().allocate(-1, 8), backend().allocate(-1, 8)};
            StepVerifier.create(Flux.fromIterable(comms).flatMap(c -> c.allReduce(bufs[c.rank()], bufs[c.rank()], 2, f32(), ReduceOp.SUM)).then())
                    .expectComplete().verify(WAIT);
            for (Buffer x : bufs) x.close();
        } finally {
            Flux.fromIterable(comms).flatMap(ReactiveCommunicator::closeAsync).then().block(WAIT);
        }
    }

    /**
     * Ranks issuing in different orders: the host backend notices the disagreement at once (NCCL would hang until the
     * timeout) and fails the operations with errors that name the work on each rank.
     */
    @Test
    void ranksIssuingInDifferentOrdersFailWithErrorsNamingTheWork() {
        Ranks r = open();
        Buffer[] small = new Buffer[r.size()];
        Buffer[] large = new Buffer[r.size()];
        for (int i = 0; i < r.size(); i++) {
            small[i] = r.floats(i, filled(2, 1f));
            large[i] = r.floats(i, filled(4, 1f));
        }
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        for (int i = 0; i < r.size(); i++) {
            int k = i;
            // Rank 0 issues (small, large); the others (large, small).
            Flux.range(0, 2)
                    .concatMap(step -> (step == 0) == (k == 0)
                            ? r.comm(k).allReduce(small[k], small[k], 2, f32(), ReduceOp.SUM)
                            : r.comm(k).allReduce(large[k], large[k], 4, f32(), ReduceOp.SUM))
                    .subscribe(null, errors::add);
        }
        await().atMost(WAIT).until(() -> errors.size() == r.size());
        for (Throwable e : errors) {
            assertInstanceOf(org.jccl.core.error.JcclException.class, e);
            assertTrue(e.getMessage().contains("allReduce(seq=1, count="), e.getMessage());
        }
        assertTrue(errors.stream().anyMatch(e -> e instanceof org.jccl.core.error.InvalidUsageException), errors.toString());
    }
}
