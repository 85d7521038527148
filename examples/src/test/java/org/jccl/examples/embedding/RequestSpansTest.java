package org.jccl.examples.embedding;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.observation.JcclObservations;
import org.jccl.core.observation.OperationContext;
import org.jccl.reactive.ReactiveCommunicator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A request's observation parents the operations of its step: two host ranks run the lookup steps of two requests;
 * rank 0's broadcast and both all-to-alls of each step are children of that step's request, the stop step's broadcast
 * and the other rank's operations are roots (rank 1 follows, it serves no request).
 */
class RequestSpansTest {
    private final Backend backend = Jccl.backend(BackendKind.HOST);
    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) open.get(i).close();
    }

    @Test
    void eachStepsOperationsAreChildrenOfItsRequest() throws Exception {
        List<Communicator> comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        comms.forEach(c -> open.add(c::close));
        List<LookupSteps> steps = new ArrayList<>();
        for (Communicator c : comms) {
            Scheduler single = Schedulers.newSingle("steps-" + c.rank());
            open.add(single::dispose);
            LookupSteps s = new LookupSteps(backend, ReactiveCommunicator.of(c), single);
            open.add(s::close);
            steps.add(s);
        }
        open.add(JcclObservations.register(registry));
        List<LookupRequest> requests = List.of(new LookupRequest(new int[] {1, 2, 3}, 0), new LookupRequest(new int[] {7}, 0));
        List<Observation> observations = new ArrayList<>();
        for (LookupRequest r : requests) {
            r.observe(registry, "embedding");
            observations.add(r.observation());
        }

        Mono.when(steps.get(0).lead(Flux.fromIterable(requests)), steps.get(1).follow()).block(Duration.ofSeconds(60));
        for (LookupRequest r : requests) {
            assertEquals(r.ids.length, r.answer().block(Duration.ofSeconds(10)).length);
            r.endObservation("ok");
        }

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("jccl.http.request", 2)
                .hasHandledContextsThatSatisfy(contexts -> {
                    List<Observation> parents = new ArrayList<>();
                    int roots = 0;
                    for (Observation.Context c : contexts) {
                        if (!(c instanceof OperationContext op)) continue;
                        Observation parent = c.getParentObservation() == null ? null : (Observation) c.getParentObservation();
                        if (op.rank() == 1 || parent == null) {
                            assertNull(parent, "rank " + op.rank() + "'s " + op.work() + " has a parent");
                            roots++;
                        } else {
                            parents.add(parent);
                        }
                    }
                    // rank 0: 3 operations per request, then the stop step's broadcast; rank 1 the same 7 as roots
                    Observation first = observations.get(0);
                    Observation second = observations.get(1);
                    assertEquals(List.of(first, first, first, second, second, second), parents);
                    assertEquals(1 + 7, roots);
                });
    }
}
