package org.jccl.rma;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** What a rank's one-sided wait sees when its signal never comes, or when a peer goes: the fault table's rows. */
class OneSidedFaultsTest {
    static final Duration TIMEOUT = Duration.ofMillis(300);
    final Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms = List.of();

    @AfterEach
    void close() {
        comms.forEach(Communicator::close);
    }

    /**
     * A wait whose signal no peer sends fails with WorkTimeoutException after the communicator's timeout, and (the
     * default policy) aborts the communicator, so its peer's next wait fails typed at once instead of waiting too.
     */
    @Test
    void aWaitWhoseSignalNeverComesTimesOutAndItsPeerFailsTyped() throws Exception {
        comms = backend.initAll(new int[] {-1, -1}, CommOptions.defaults().withTimeout(TIMEOUT)).get(30, TimeUnit.SECONDS);
        long start = System.nanoTime();
        Work never = OneSided.of(comms.get(1)).waitSignal(SignalWait.of(0, 1));
        ExecutionException e = assertThrows(ExecutionException.class, () -> never.get(20, TimeUnit.SECONDS));
        assertInstanceOf(WorkTimeoutException.class, e.getCause(), String.valueOf(e.getCause()));
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(TIMEOUT) >= 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> !comms.get(1).isOpen()); // the timeout aborts it
        Work peer = OneSided.of(comms.get(0)).waitSignal(SignalWait.of(1, 1));
        ExecutionException p = assertThrows(ExecutionException.class, () -> peer.get(20, TimeUnit.SECONDS));
        assertInstanceOf(RemoteErrorException.class, p.getCause(), String.valueOf(p.getCause()));
    }

    /** A peer that aborts while this rank waits for its signal fails the wait with RemoteErrorException. */
    @Test
    void aPeerThatAbortsFailsTheWaitForItsSignal() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        OneSided rma = OneSided.of(comms.get(1));
        Work waiting = rma.waitSignal(SignalWait.of(0, 1));
        comms.get(0).abort();
        ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS));
        assertInstanceOf(RemoteErrorException.class, e.getCause(), String.valueOf(e.getCause()));
        // A later wait on the aborted rank is refused typed, at the call or through its work (the abort may still be
        // under way), and never left waiting.
        Throwable later = refusal(() -> rma.waitSignal(SignalWait.of(0, 1)).get(20, TimeUnit.SECONDS));
        assertInstanceOf(JcclException.class, later, String.valueOf(later));
    }

    private static Throwable refusal(Executable call) {
        Throwable t = assertThrows(Throwable.class, call);
        return t instanceof ExecutionException ? t.getCause() : t;
    }
}
