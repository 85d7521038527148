package org.jccl.core.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Micrometer meters of jccl's operations, on two host ranks in this JVM. */
class JcclMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final JcclMetrics metrics = new JcclMetrics();
    private final List<Buffer> buffers = new ArrayList<>();
    private Backend host;
    private List<Communicator> comms;

    @BeforeEach
    void setUp() throws Exception {
        host = Jccl.backend(BackendKind.HOST);
        CommOptions options = CommOptions.defaults().withTimeout(Duration.ofSeconds(30));
        comms = host.initAll(new int[] {0, 0}, options).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() {
        metrics.close();
        for (Communicator c : comms) c.abort().join();
        for (Buffer b : buffers) b.close();
    }

    private Buffer buffer(long bytes) {
        Buffer b = host.allocate(0, bytes);
        buffers.add(b);
        return b;
    }

    private Timer timer(int rank, String operation, String outcome) {
        return registry.find("jccl.operations").tag("comm", comms.get(rank).id()).tag("rank", Integer.toString(rank))
                .tag("operation", operation).tag("outcome", outcome).timer();
    }

    private double bytes(int rank, String operation) {
        Counter c = registry.find("jccl.operations.bytes").tag("rank", Integer.toString(rank)).tag("operation", operation).counter();
        return c == null ? 0 : c.count();
    }

    private double inFlight(int rank, String operation) {
        Gauge g = registry.find("jccl.operations.in.flight").tag("rank", Integer.toString(rank)).tag("operation", operation).gauge();
        return g == null ? Double.NaN : g.value();
    }

    /** Issues an allReduce of {@code count} floats on every rank and waits for all. */
    private void allReduceOnEveryRank(int count) {
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            Buffer b = buffer(4L * count);
            works.add(c.allReduce(b, b, count, DataType.FLOAT32, ReduceOp.SUM));
        }
        for (Work w : works) w.join();
    }

    @Test
    void countsTimesAndBytesPerCommunicatorRankAndOperationAndIsUpToDateWhenAWorkCompletes() {
        metrics.bindTo(registry);
        allReduceOnEveryRank(8);
        allReduceOnEveryRank(16);
        for (int rank = 0; rank < 2; rank++) {
            Timer t = timer(rank, "allReduce", "success");
            assertEquals(2, t.count(), "rank " + rank);
            assertTrue(t.totalTime(TimeUnit.NANOSECONDS) > 0);
            assertEquals(4 * (8 + 16), bytes(rank, "allReduce"));
            assertEquals(0, inFlight(rank, "allReduce"));
            assertEquals(0, timer(rank, "allReduce", "error").count());
        }
    }

    @Test
    void aGroupIsOneOperationNamedGroupWithTheBytesOfItsMembers() {
        metrics.bindTo(registry);
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            int peer = 1 - c.rank();
            Buffer out = buffer(40);
            Buffer in = buffer(40);
            works.add(Group.create().add(c, Operation.send(out, 10, DataType.INT32, peer))
                    .add(c, Operation.recv(in, 10, DataType.INT32, peer)).submit());
        }
        for (Work w : works) w.join();
        assertEquals(1, timer(0, "group", "success").count());
        assertEquals(80, bytes(0, "group"));
        assertNull(timer(0, "send", "success"));
    }

    @Test
    void aFailedOperationCountsAsAnErrorOfItsExceptionAndLeavesNothingInFlight() {
        metrics.bindTo(registry);
        Buffer b = buffer(16);
        // Rank 1 never joins: it times out (its own short timeout; the others keep the communicator's).
        Work lone = comms.get(0).submit(Operation.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM), Duration.ofMillis(300));
        CompletionException e = assertThrows(CompletionException.class, lone::join);
        assertTrue(e.getCause() instanceof WorkTimeoutException, String.valueOf(e.getCause()));
        assertEquals(1, timer(0, "allReduce", "error").count());
        Counter errors = registry.find("jccl.operations.errors").tag("rank", "0").tag("operation", "allReduce")
                .tag("exception", "WorkTimeoutException").counter();
        assertEquals(1, errors.count());
        assertEquals(0, inFlight(0, "allReduce"));
    }

    @Test
    void recordsNothingBeforeBindingOrAfterClosingAndACloseMetricsCannotBeBound() {
        allReduceOnEveryRank(4);
        assertTrue(registry.getMeters().isEmpty(), "unbound metrics record nothing");
        metrics.bindTo(registry);
        allReduceOnEveryRank(4);
        metrics.close();
        allReduceOnEveryRank(4);
        assertEquals(1, timer(0, "allReduce", "success").count());
        assertThrows(InvalidUsageException.class, () -> metrics.bindTo(registry));
    }
}
