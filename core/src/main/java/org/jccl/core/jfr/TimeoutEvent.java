package org.jccl.core.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;

/**
 * A timeout jccl enforced: a work still pending past its deadline, a call in issue order (a module's collective
 * set-up) not done within the communicator's timeout, a creation past {@code jccl.initTimeout}, or the library's abort
 * past {@code jccl.abortTimeout}. An instant event, committed when the timeout is acted on; the work's own
 * {@link OperationEvent} (or the call's {@link LifecycleEvent}) then ends in a {@code WorkTimeoutException}.
 */
@Name(TimeoutEvent.NAME)
@Label("jccl Timeout")
@Category("jccl")
@Description("A work, call, creation or abort that did not finish within its timeout")
@StackTrace(false) // found by the event thread or a timer: its stack says nothing of the caller
public final class TimeoutEvent extends Event {
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "jccl.Timeout";

    @Label("Communicator")
    @Description("The communicator's id, shared by its ranks (comm=3f2a in messages)")
    String communicator;

    @Label("Rank")
    int rank;

    @Label("Size")
    int size;

    @Label("Sequence")
    @Description("The work's sequence number; -1 for a call, a creation or an abort")
    long sequence;

    @Label("What")
    @Description("The work or call, as messages describe it")
    String what;

    @Label("Timeout")
    @Timespan(Timespan.NANOSECONDS)
    long timeout;

    @Label("Waiting For")
    @Description("What the rank waits for, as the backend reports it (the ranks a call still waits for, a signal), "
            + "else the usual cause")
    @Nullable String waitingFor;

    @Label("Aborts Communicator")
    @Description("Whether the timeout aborts the communicator (TimeoutPolicy.ABORT_COMMUNICATOR)")
    boolean abortsCommunicator;

    private TimeoutEvent() {
    }

    /** Commits the event now, if it is enabled. */
    static void record(String communicator, int rank, int size, long sequence, String what, long timeoutNanos,
                       @Nullable String waitingFor, boolean abortsCommunicator) {
        TimeoutEvent e = new TimeoutEvent();
        if (!e.shouldCommit()) return;
        e.communicator = communicator;
        e.rank = rank;
        e.size = size;
        e.sequence = sequence;
        e.what = what;
        e.timeout = timeoutNanos;
        e.waitingFor = waitingFor;
        e.abortsCommunicator = abortsCommunicator;
        e.commit();
    }
}
