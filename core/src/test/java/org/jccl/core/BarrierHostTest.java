package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.Test;

/** {@link Communicator#barrier()} on host ranks: it waits for every rank, says what it is, and ends with the communicator. */
class BarrierHostTest {
    private static final Backend HOST = Jccl.backend(BackendKind.HOST);

    @Test
    void aBarrierCompletesOnlyOnceEveryRankHasCalledIt() throws Exception {
        List<Communicator> comms = HOST.initAll(3).get(30, TimeUnit.SECONDS);
        try {
            Work first = comms.get(0).barrier();
            Work second = comms.get(1).barrier();
            assertTrue(first.describe().contains("barrier(seq="), first.describe());
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                    .until(() -> !first.isDone() && !second.isDone());
            Work last = comms.get(2).barrier(Duration.ofSeconds(30));
            for (Work w : List.of(first, second, last)) w.get(30, TimeUnit.SECONDS);
            // The communicators go on working after it, with the barrier's byte reused.
            for (Communicator c : comms) assertEquals(0, c.pendingCount());
            List<Work> again = comms.stream().map(Communicator::barrier).toList();
            for (Work w : again) w.get(30, TimeUnit.SECONDS);
        } finally {
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void aClosedCommunicatorRefusesABarrier() throws Exception {
        Communicator comm = HOST.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        comm.barrier().get(30, TimeUnit.SECONDS);
        comm.close();
        assertThrows(InvalidUsageException.class, comm::barrier);
    }
}
