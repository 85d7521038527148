package org.jccl.reactive;

import static org.jccl.reactive.Ranks.WAIT;
import static org.jccl.reactive.Ranks.f32;
import static org.jccl.reactive.Ranks.filled;
import static org.jccl.reactive.Ranks.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommOptions;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The communicator-level calls of the reactive shape on the host backend with three ranks: those it supports work
 * through the Monos (shrink, group simulation), and those it lacks fail the Mono with the typed error, at
 * subscription and without hanging, leaving the communicator usable.
 */
class HostCommunicatorCallsTest {
    private Ranks r;

    @BeforeEach
    void openRanks() {
        r = Ranks.open(Jccl.backend(BackendKind.HOST), 3, CommOptions.defaults());
    }

    @AfterEach
    void closeRanks() {
        r.close();
    }

    @Test
    void callsTheHostBackendLacksFailTheMonoWithUnsupportedFeature() {
        ReactiveCommunicator comm = r.comm(0);
        // Keyed by the library function each needs. Made first and subscribed later: building a Mono calls nothing.
        Map<String, Mono<?>> unsupported = Map.of(
                "ncclCommSuspend", comm.suspend(),
                "ncclCommResume", comm.resume(),
                "ncclCommMemStats", comm.memStats(),
                "ncclCommRevoke", comm.revoke(),
                "ncclCommGetUniqueId", comm.growUniqueId(),
                "ncclCommGrow", comm.grow(r.size() + 1, null, CommConfig.DEFAULT, CommOptions.defaults()));
        unsupported.forEach((function, mono) -> StepVerifier.create(mono)
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(UnsupportedFeatureException.class, e, function);
                    assertEquals(function, ((UnsupportedFeatureException) e).function());
                })
                .verify(WAIT));
        assertEquals(0, r.core(0).pendingCount());
        assertTrue(r.core(0).isOpen(), "a missing feature does not abort the communicator");
        Buffer[] b = new Buffer[r.size()];
        for (int i = 0; i < r.size(); i++) b[i] = r.floats(i, filled(2, 1f));
        StepVerifier.create(r.all(i -> r.comm(i).allReduce(b[i], b[i], 2, f32(), ReduceOp.SUM))).expectComplete().verify(WAIT);
        for (Buffer x : b) assertArrayEquals(filled(2, r.size()), read(x, 2));
    }

    @Test
    void shrinkLeavesTheRemainingRanksInAWorkingCommunicator() {
        int[] excluded = {0};
        List<ReactiveCommunicator> shrunk = Flux.range(1, r.size() - 1)
                .flatMap(i -> r.comm(i).shrink(excluded, CommConfig.DEFAULT, CommOptions.defaults()))
                .collectList().block(WAIT);
        shrunk.forEach(r::track);
        assertEquals(r.size() - 1, shrunk.size());
        Buffer[] b = new Buffer[shrunk.size()];
        StepVerifier.create(Flux.fromIterable(shrunk).flatMap(c -> {
            assertEquals(r.size() - 1, c.size());
            b[c.rank()] = r.floats(c.rank() + 1, filled(2, c.rank() + 1));
            return c.allReduce(b[c.rank()], b[c.rank()], 2, f32(), ReduceOp.SUM);
        }).then()).expectComplete().verify(WAIT);
        for (Buffer x : b) assertArrayEquals(filled(2, 3f), read(x, 2), "1 + 2 from the two remaining ranks");
    }

    @Test
    void simulatingAGroupEstimatesItsTimeWithoutLaunchingIt() {
        Buffer[] b = new Buffer[r.size()];
        ReactiveGroup group = ReactiveGroup.create();
        for (int i = 0; i < r.size(); i++) {
            b[i] = r.floats(i, filled(4, 1f));
            group = group.add(r.comm(i), Operation.allReduce(b[i], b[i], 4, f32(), ReduceOp.SUM));
        }
        AtomicReference<Float> estimate = new AtomicReference<>();
        StepVerifier.create(group.simulate()).consumeNextWith(estimate::set).expectComplete().verify(WAIT);
        assertTrue(estimate.get() > 0, "estimate " + estimate.get());
        for (int i = 0; i < r.size(); i++) {
            assertEquals(0, r.core(i).pendingCount());
            assertArrayEquals(filled(4, 1f), read(b[i], 4), "nothing ran");
        }
        // The simulated group is still a group: submitting it runs it once.
        StepVerifier.create(group.submit()).expectComplete().verify(WAIT);
        for (Buffer x : b) assertArrayEquals(filled(4, r.size()), read(x, 4));
    }

    @Test
    void simulatingABadGroupFailsAtSubscription() {
        Buffer small = r.zeros(0, 1);
        StepVerifier.create(ReactiveGroup.create().simulate())
                .expectError(InvalidArgumentException.class).verify(WAIT);
        StepVerifier.create(ReactiveGroup.create().add(r.comm(0), Operation.allReduce(small, small, 99, f32(), ReduceOp.SUM))
                .simulate()).expectError(InvalidArgumentException.class).verify(WAIT);
    }
}
