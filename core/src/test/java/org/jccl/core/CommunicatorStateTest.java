package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;
import org.junit.jupiter.api.Test;

/**
 * What a communicator's engine state promises modules and clean-up code: attachments told of the end in order, set-up
 * calls on the launch thread and refused once closed, clean-up run only while the library still has the
 * communicator, the abort on a daemon thread of its own, messages that name the communicator, and a non-blocking
 * communicator's async error left unqueried while a module's call is inside the library.
 */
class CommunicatorStateTest extends ScriptedEngineFixture {
    /** Records what it was told. */
    private static final class Recording implements Attachment {
        final List<String> told = new CopyOnWriteArrayList<>();

        @Override
        public void communicatorClosing() {
            told.add("closing");
        }

        @Override
        public void communicatorGone() {
            told.add("gone");
        }
    }

    private static final AttachmentKey<Recording> KEY = AttachmentKey.of("recording", c -> new Recording());

    @Test
    void anAttachmentIsToldClosingThenGoneOnCloseAndOnAbort() {
        Communicator closed = comm();
        Recording a = Modules.context(closed).attachment(KEY);
        closed.closeAsync().join();
        assertEquals(List.of("closing", "gone"), a.told);
        Communicator aborted = comm();
        Recording b = Modules.context(aborted).attachment(KEY);
        aborted.abort().join();
        await().atMost(WAIT).until(() -> b.told.size() == 2);
        assertEquals(List.of("closing", "gone"), b.told);
    }

    @Test
    void aModuleCallRunsOnTheLaunchThreadAndIsRefusedOnceClosed() {
        Communicator c = comm();
        String thread = Modules.context(c).call("which thread", () -> Thread.currentThread().getName()).join();
        assertTrue(thread.startsWith("jccl-launch-"), thread);
        c.closeAsync().join();
        InvalidUsageException e = assertThrows(InvalidUsageException.class, () -> Modules.context(c).call("late", () -> 1));
        assertTrue(e.getMessage().startsWith(c.describe()), e.getMessage());
    }

    @Test
    void cleanUpRunsInIssueOrderOnlyWhileTheLibraryHasTheCommunicator() {
        Communicator open = comm();
        AtomicBoolean ran = new AtomicBoolean();
        assertTrue(open.state().cleanUpInOrder(() -> ran.set(true)));
        await().atMost(WAIT).untilTrue(ran);
        open.closeAsync().join();
        assertFalse(open.state().cleanUpInOrder(() -> { }), "closed: the library freed everything");
        Communicator aborted = comm();
        aborted.abort().join();
        assertFalse(aborted.state().cleanUpInOrder(() -> { }), "aborted: the library freed everything");
    }

    @Test
    void theLibrarysAbortRunsOnADaemonThreadOfItsOwn() {
        Communicator c = comm();
        driver.abortGate = new CountDownLatch(1);
        try {
            c.abort();
            await().atMost(WAIT).until(() -> abortThread(c) != null);
            assertTrue(abortThread(c).isDaemon(), "a hanging library abort must not keep the JVM alive");
        } finally {
            driver.abortGate.countDown();
        }
    }

    private static Thread abortThread(Communicator c) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("jccl-abort-" + c.state().label())) return t;
        }
        return null;
    }

    /**
     * A non-blocking communicator's async error must not be queried while the launch thread is inside the library
     * (NCCL would complete its in-flight job from the wrong thread), also during a module's set-up call; once the call
     * returns, the error is seen and aborts the communicator.
     */
    @Test
    void anAsyncErrorWaitsWhileAModuleCallIsInsideALibraryThatForbidsTheQuery() {
        driver.asyncErrorUnsafeDuringLaunch = true;
        Communicator c = comm();
        Buffer b = buffer(16);
        Work pending = c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM); // its event stays pending: c is watched
        CountDownLatch leave = new CountDownLatch(1);
        var call = Modules.context(c).call("inside the library", () -> {
            driver.asyncError = Errors.REMOTE_ERROR;
            try {
                leave.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        await().during(Duration.ofMillis(100)).atMost(WAIT).until(c::isOpen);
        leave.countDown();
        call.join();
        await().atMost(WAIT).until(() -> !c.isOpen());
        assertTrue(pending.isCompletedExceptionally());
    }
}
