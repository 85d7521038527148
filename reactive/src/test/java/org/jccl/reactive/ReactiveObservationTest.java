package org.jccl.reactive;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.jccl.reactive.Ranks.WAIT;
import static org.jccl.reactive.Ranks.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.observation.JcclObservations;
import org.jccl.core.observation.OperationContext;
import org.jccl.core.observation.OperationConvention;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * Tracing through the reactive shape on two host ranks: the observation in a subscription's Reactor context is the
 * parent of the observation of every operation that subscription issues, on whatever thread it issues it.
 */
class ReactiveObservationTest {
    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private JcclObservations observations;
    private Ranks r;

    @BeforeEach
    void setUp() {
        observations = JcclObservations.register(registry);
        r = Ranks.open(Jccl.backend(BackendKind.HOST), 2, CommOptions.defaults());
    }

    @AfterEach
    void tearDown() {
        r.close();
        observations.close();
    }

    /** allReduce, then broadcast, on {@code rank}: the broadcast is subscribed on jccl's event thread. */
    private Mono<Void> chain(int rank, Buffer b) {
        ReactiveCommunicator c = r.comm(rank);
        return c.allReduce(b, b, 2, f32(), ReduceOp.SUM).then(c.broadcast(b, b, 2, f32(), 0));
    }

    @Test
    void everyOperationOfAChainIsAChildOfTheObservationInItsContext() {
        Buffer[] b = {r.zeros(0, 2), r.zeros(1, 2)};
        Observation request = Observation.start("request", registry);
        r.all(i -> chain(i, b[i])).contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, request)).block(WAIT);
        request.stop();
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(OperationConvention.NAME, 4)
                .forAllObservationsWithNameEqualTo(OperationConvention.NAME, o -> o.hasParentObservationEqualTo(request))
                .hasAnObservationWithAKeyValue("operation", "broadcast");
    }

    @Test
    void concurrentRequestsEachParentTheirOwnOperations() {
        Buffer[] b = {r.zeros(0, 2), r.zeros(1, 2)};
        Observation[] requests = {Observation.start("request", registry), Observation.start("request", registry)};
        r.all(i -> chain(i, b[i]).contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, requests[i]))).block(WAIT);
        for (Observation request : requests) request.stop();
        assertThat(registry).hasHandledContextsThatSatisfy(contexts -> {
            long operations = contexts.stream().filter(c -> c instanceof OperationContext).count();
            assertEquals(4, operations);
            for (Observation.Context c : contexts) {
                if (c instanceof OperationContext op) {
                    assertSame(requests[op.rank()], c.getParentObservation(), "rank " + op.rank() + "'s " + op.work());
                }
            }
        });
    }

    @Test
    void withoutAnObservationInTheContextAnOperationIsARoot() {
        Buffer[] b = {r.zeros(0, 2), r.zeros(1, 2)};
        r.all(i -> chain(i, b[i])).block(WAIT);
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(OperationConvention.NAME, 4)
                .forAllObservationsWithNameEqualTo(OperationConvention.NAME, o -> o.doesNotHaveParentObservation());
    }
}
