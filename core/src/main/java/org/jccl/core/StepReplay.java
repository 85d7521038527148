package org.jccl.core;

import org.jccl.core.engine.TrackedWork;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replay of a step in flight without a future ({@link Step#replay(Completion)}): the engine tracks it as any work,
 * tells its {@link Completion} instead of completing a future, and hands itself back to its owner (the step) once the
 * engine has let go of it, to be issued again, so that a replay allocates nothing. Never handed to the application:
 * as a future it never completes.
 */
final class StepReplay extends TrackedWork {
    private static final Logger LOG = LoggerFactory.getLogger(StepReplay.class);
    private static final MemoryBlock[] NONE = new MemoryBlock[0];

    /** What the step learns of its replays without a future. */
    interface Owner {
        /** The replay's outcome was told: it no longer holds the step's close back. */
        void settled();

        /** The engine let go of the replay: it may be issued again. */
        void retired(StepReplay replay);
    }

    private final Communicator communicator;
    private final SubmissionPart part;
    private final Owner owner;
    /** Told of the current issue's outcome; null between issues. */
    private @Nullable Completion then;

    StepReplay(Communicator communicator, SubmissionPart part, Owner owner) {
        super(0, NONE, 0);
        this.communicator = communicator;
        this.part = part;
        this.owner = owner;
    }

    /** Makes this replay ready to be issued again, its memory retained until the engine retires it. */
    void arm(Completion completion, long timeoutNanos) {
        then = completion;
        reuse(part.held(), timeoutNanos);
    }

    @Override
    public String describe() {
        return communicator.describe() + " " + part.describe(sequence());
    }

    @Override
    protected void enqueue(DriverStream stream) {
        part.enqueue().enqueue(stream);
    }

    @Override
    protected boolean deliver(@Nullable Throwable error) {
        Completion c = then;
        then = null;
        if (c == null) return false;
        try {
            c.completed(error);
        } catch (RuntimeException e) {
            LOG.error("{}: its completion callback failed", describe(), e);
        } finally {
            owner.settled();
        }
        return true;
    }

    @Override
    protected void retired() {
        owner.retired(this);
    }
}
