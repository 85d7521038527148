package org.jccl.core.nccl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
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
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.TimeoutPolicy;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Abort on one GPU while NCCL is stuck: a rank of two whose peer never comes (non-blocking creation), and a
 * one-rank communicator whose send to itself has no receive. Either way the call ends within its timeout
 * ({@code jccl.initTimeout}, the work timeout) plus {@code jccl.abortTimeout}, typed, the library's abort returns (its thread ends), and the process stays
 * usable: a new communicator's all-reduce is right.
 */
@Tag("gpu")
class NcclAbortGpuTest {
    private static final Duration ABORT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    /** Slack for the polling and thread hand-offs between the deadlines and what the test sees. */
    private static final Duration SLACK = Duration.ofSeconds(10);
    private static String abortTimeoutBefore;
    private static String initTimeoutBefore;
    private static Backend nccl;

    @BeforeAll
    static void open() {
        abortTimeoutBefore = System.getProperty("jccl.abortTimeout");
        System.setProperty("jccl.abortTimeout", ABORT_TIMEOUT.toSeconds() + "s");
        initTimeoutBefore = System.getProperty("jccl.initTimeout");
        System.setProperty("jccl.initTimeout", TIMEOUT.toSeconds() + "s");
        nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.deviceCount() >= 1, "needs a GPU");
    }

    @AfterAll
    static void restore() {
        if (abortTimeoutBefore == null) System.clearProperty("jccl.abortTimeout");
        else System.setProperty("jccl.abortTimeout", abortTimeoutBefore);
        if (initTimeoutBefore == null) System.clearProperty("jccl.initTimeout");
        else System.setProperty("jccl.initTimeout", initTimeoutBefore);
    }

    @Test
    void aCreationWhosePeerNeverComesEndsAtTheTimeoutAndItsAbortReturns() throws Exception {
        long launchThreadsBefore = launchThreads();
        long start = System.nanoTime();
        CompletableFuture<Communicator> creating = nccl.initRank(nccl.newUniqueId(), 2, 0, 0,
                CommConfig.builder().blocking(false).build(), CommOptions.defaults());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> creating.get(TIMEOUT.plus(SLACK).toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(WorkTimeoutException.class, e.getCause(), e.toString());
        System.out.println("creation ended after " + Duration.ofNanos(System.nanoTime() - start) + ": " + e.getCause().getMessage());
        // ncclCommAbort of the half-made communicator runs on its launch thread, which ends once the abort returned.
        await().atMost(ABORT_TIMEOUT.plus(SLACK)).until(() -> launchThreads() <= launchThreadsBefore);
        System.out.println("its abort returned after " + Duration.ofNanos(System.nanoTime() - start));
        aNewCommunicatorWorks();
    }

    @Test
    void abortOfACommunicatorWithASendNobodyReceivesReturnsWithinTheAbortTimeout() throws Exception {
        CommOptions options = CommOptions.defaults().withTimeout(TIMEOUT).withTimeoutPolicy(TimeoutPolicy.REPORT);
        Communicator comm = nccl.initRank(nccl.newUniqueId(), 1, 0, 0, CommConfig.DEFAULT, options).get(60, TimeUnit.SECONDS);
        Buffer b = nccl.allocate(0, 64);
        try {
            Work send = comm.send(b, 16, DataType.FLOAT32, 0);
            // NCCL either refuses the unmatched send (typed, at once) or its kernel waits for a receive that never
            // comes, and the work fails at the timeout; it must not end otherwise.
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> send.get(TIMEOUT.plus(SLACK).toSeconds(), TimeUnit.SECONDS));
            assertInstanceOf(JcclException.class, failed.getCause(), failed.toString());
            System.out.println("the unmatched send ended with " + failed.getCause());
            long start = System.nanoTime();
            CompletableFuture<Void> aborted = comm.abort();
            try {
                aborted.get(ABORT_TIMEOUT.plus(SLACK).toSeconds(), TimeUnit.SECONDS);
                System.out.println("ncclCommAbort returned after " + Duration.ofNanos(System.nanoTime() - start));
            } catch (ExecutionException hung) {
                // The library's abort hung: jccl's abort still ended, typed, at jccl.abortTimeout.
                assertInstanceOf(WorkTimeoutException.class, hung.getCause(), hung.toString());
                System.out.println("ncclCommAbort hung; abort() ended after " + Duration.ofNanos(System.nanoTime() - start));
            }
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(ABORT_TIMEOUT.plus(SLACK)) <= 0, "abort took " + took);
        } finally {
            comm.close();
            b.close();
        }
        aNewCommunicatorWorks();
    }

    private static void aNewCommunicatorWorks() throws Exception {
        try (Communicator fresh = nccl.initRank(nccl.newUniqueId(), 1, 0, 0).get(60, TimeUnit.SECONDS);
             Buffer b = nccl.allocate(0, 16)) {
            b.write(0, new float[] {1, 2, 3, 4});
            fresh.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {1, 2, 3, 4}, b.readFloats(0, 4));
        }
    }

    private static long launchThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("jccl-launch-")).count();
    }
}
