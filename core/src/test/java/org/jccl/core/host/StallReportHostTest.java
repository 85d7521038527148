package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A collective some rank never joins: after {@code jccl.stallReport} the log says, once, which ranks it waits for; at
 * its timeout the error names them too.
 */
class StallReportHostTest {
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private PrintStream err;
    private String savedStallReport;

    @BeforeEach
    void captureTheLogAndReportStallsAfter200Ms() {
        savedStallReport = System.getProperty(JcclSettings.STALL_REPORT.property());
        System.setProperty(JcclSettings.STALL_REPORT.property(), "200ms");
        err = System.err;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err
    }

    @AfterEach
    void restore() {
        System.setErr(err);
        if (savedStallReport == null) System.clearProperty(JcclSettings.STALL_REPORT.property());
        else System.setProperty(JcclSettings.STALL_REPORT.property(), savedStallReport);
    }

    @Test
    void aStalledAllReduceIsReportedOnceNamingTheRankThatHasNotJoined() throws Exception {
        List<Communicator> comms = HostTesting.host().initAll(3).get(30, TimeUnit.SECONDS);
        Buffer[] buffers = new Buffer[3];
        try {
            for (int r = 0; r < 3; r++) buffers[r] = HostTesting.floats(1, 2, 3);
            Work first = comms.get(0).allReduce(buffers[0], buffers[0], 3, DataType.FLOAT32, ReduceOp.SUM);
            Work second = comms.get(1).allReduce(buffers[1], buffers[1], 3, DataType.FLOAT32, ReduceOp.SUM);
            String rank0 = comms.get(0).describe() + " allReduce(seq=";
            await().atMost(Duration.ofSeconds(30)).until(() -> reports(rank0) == 1);
            String line = logText().lines().filter(l -> l.contains(rank0) && l.contains("still pending")).findFirst().orElseThrow();
            assertTrue(line.contains("its stream waits in allReduce for rank 2, which has not joined it"), line);
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> reports(rank0) == 1);
            Work last = comms.get(2).allReduce(buffers[2], buffers[2], 3, DataType.FLOAT32, ReduceOp.SUM);
            for (Work w : List.of(first, second, last)) w.get(30, TimeUnit.SECONDS);
        } finally {
            for (Buffer b : buffers) if (b != null) b.close();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void theTimeoutErrorNamesTheRanksThatHaveNotJoined() throws Exception {
        List<Communicator> comms = HostTesting.host().initAll(3).get(30, TimeUnit.SECONDS);
        Buffer[] buffers = new Buffer[2];
        try {
            Work[] works = new Work[2];
            for (int r = 0; r < 2; r++) {
                buffers[r] = HostTesting.floats(1, 2, 3);
                works[r] = comms.get(r).submit(Operation.allReduce(buffers[r], buffers[r], 3, DataType.FLOAT32, ReduceOp.SUM),
                        Duration.ofMillis(500));
            }
            // The first rank to time out aborts the communicator, which ends the other's wait: whichever it is, its
            // error names the absent rank.
            Throwable cause = HostTesting.failure(works[0]);
            assertInstanceOf(WorkTimeoutException.class, cause);
            String other = HostTesting.failure(works[1]).getMessage();
            String expected = "waits in allReduce for rank 2, which has not joined it";
            assertTrue(cause.getMessage().contains(expected) || other.contains(expected), cause.getMessage() + "\n" + other);
        } finally {
            for (Buffer b : buffers) if (b != null) b.close();
            for (Communicator c : comms) c.abort().get(30, TimeUnit.SECONDS);
        }
    }

    private long reports(String work) {
        return logText().lines().filter(l -> l.contains(work) && l.contains("still pending") && l.contains("jccl.stallReport")).count();
    }

    private String logText() {
        return log.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theSettingHasADocumentedDefault() {
        assertEquals("30s", JcclSettings.STALL_REPORT.defaultValue());
    }
}
