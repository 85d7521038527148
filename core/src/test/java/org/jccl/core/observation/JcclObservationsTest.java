package org.jccl.core.observation;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Observations of operations on host ranks in this JVM: parent, names, key values, errors. */
class JcclObservationsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final Backend host = Jccl.backend(BackendKind.HOST);
    private final List<Buffer> buffers = new ArrayList<>();
    private JcclObservations observations;
    private List<Communicator> comms;

    @BeforeEach
    void setUp() throws Exception {
        observations = JcclObservations.register(registry);
        comms = host.initAll(2).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() {
        observations.close();
        for (Communicator c : comms) c.abort().join();
        for (Buffer b : buffers) b.close();
    }

    private Buffer buffer(long bytes) {
        Buffer b = host.allocate(-1, bytes);
        buffers.add(b);
        return b;
    }

    private void allReduceOnEveryRank() throws Exception {
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            Buffer b = buffer(64);
            works.add(c.allReduce(b, b, 16, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (Work w : works) w.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void anOperationIsAChildOfTheObservationCurrentOnTheIssuingThread() throws Exception {
        Observation request = Observation.start("request", registry);
        request.scopedChecked(this::allReduceOnEveryRank);
        request.stop();
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(OperationConvention.NAME, 2)
                .forAllObservationsWithNameEqualTo(OperationConvention.NAME, o -> o.hasParentObservationEqualTo(request)
                        .doesNotHaveError()
                        .hasContextualNameEqualTo("jccl allReduce")
                        .hasLowCardinalityKeyValue("comm", comms.get(0).id())
                        .hasLowCardinalityKeyValue("operation", "allReduce")
                        .hasHighCardinalityKeyValue("sequence", "1")
                        .hasHighCardinalityKeyValue("bytes", "64"));
        assertThat(registry).hasAnObservationWithAKeyValue("rank", "0").hasAnObservationWithAKeyValue("rank", "1")
                .hasObservationWithNameEqualTo(OperationConvention.NAME).that().hasBeenStopped();
    }

    @Test
    void withNoCurrentObservationAnOperationIsARoot() throws Exception {
        allReduceOnEveryRank();
        assertThat(registry).forAllObservationsWithNameEqualTo(OperationConvention.NAME, o -> o.doesNotHaveParentObservation());
    }

    @Test
    void aFailedOperationStopsItsObservationWithTheError() {
        Buffer b = buffer(16);
        // Rank 1 never joins: rank 0's allReduce times out.
        Work lone = comms.get(0).submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMillis(200));
        Throwable failure = assertThrows(ExecutionException.class, () -> lone.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getCause();
        assertTrue(failure instanceof WorkTimeoutException, String.valueOf(failure));
        assertThat(registry).hasObservationWithNameEqualTo(OperationConvention.NAME).that().hasBeenStopped().hasError(failure);
    }

    @Test
    void nothingIsObservedOnceClosedAndANullRegistryIsRefused() throws Exception {
        observations.close();
        observations.close(); // idempotent
        allReduceOnEveryRank();
        assertThat(registry).doesNotHaveAnyObservation();
        assertThrows(InvalidArgumentException.class, () -> JcclObservations.register(null));
    }
}
