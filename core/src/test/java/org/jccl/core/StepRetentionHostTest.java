package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.Holds;
import org.jccl.core.module.StreamOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a step keeps alive besides its buffers (a module's window or device communicator, here a bare {@link Holds}):
 * taken when the step is built, released once it is closed and its last replay completed, so the resource's own
 * close waits for the step.
 */
class StepRetentionHostTest {
    final Backend host = Jccl.backend(BackendKind.HOST);
    Communicator comm;

    @BeforeEach
    void open() throws Exception {
        comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
    }

    @AfterEach
    void close() {
        comm.close();
    }

    private static StreamOperation using(Holds resource) {
        return new StreamOperation("uses()", List.of(), stream -> { }, resource.retention());
    }

    @Test
    void aResourceClosedWhileAStepHoldsItIsReleasedWithTheStep() throws Exception {
        Holds resource = new Holds("resource");
        Step step = Step.builder(comm).add(using(resource)).group(Group.create().add(comm, using(resource)))
                .build().get(30, TimeUnit.SECONDS);
        assertEquals(2, resource.count(), "a hold per captured operation, in a group too");
        CompletableFuture<Void> released = resource.closing();
        step.replay().get(30, TimeUnit.SECONDS); // replays go on: the step holds what they use
        assertFalse(released.isDone());
        step.closeAsync().get(30, TimeUnit.SECONDS);
        assertTrue(released.isDone());
        assertEquals(0, resource.count());
    }

    @Test
    void aClosedResourceIsRefusedWhenTheStepIsBuiltAndNothingStaysHeld() {
        Holds kept = new Holds("kept");
        Holds gone = new Holds("gone");
        gone.closing();
        Step.Builder builder = Step.builder(comm).add(using(kept)).group(Group.create().add(comm, using(gone)));
        assertThrows(InvalidUsageException.class, builder::build);
        assertThrows(InvalidUsageException.class, builder::buildReissued);
        assertEquals(0, kept.count());
    }
}
