package org.jccl.core.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;

/**
 * One communicator operation (a collective, a send or recv, a group, a module's operation), from issue to the
 * completion the event thread saw: the event's start is the issue (the sequence number given, on the caller's thread),
 * its end the completion, and {@link #issueToLaunch} places the launch between them. Committed by the thread that
 * completes the work (usually jccl's event thread), before the work's dependents run; {@link #issuer} names the
 * caller's thread.
 *
 * <p>The default threshold (10 ms) applies to recordings whose settings do not name this event (the JDK's
 * {@code default.jfc}): a service recording continuously then sees only slow operations, not every one of tens of
 * thousands per second. jccl's {@code jccl.jfc} records all of them.
 */
@Name(OperationEvent.NAME)
@Label("jccl Operation")
@Category("jccl")
@Description("A communicator operation from issue through launch to completion")
@StackTrace(false) // committed on the event thread: its stack says nothing of the caller
@Threshold("10 ms")
public final class OperationEvent extends Event {
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "jccl.Operation";
    /**
     * Asked whether the event is enabled, so that a disabled event allocates nothing: {@link #isEnabled()} reads only
     * the event type's state, never the instance's, and this instance is never begun or committed.
     */
    private static final OperationEvent PROBE = new OperationEvent();

    @Label("Communicator")
    @Description("The communicator's id, shared by its ranks (comm=3f2a in messages)")
    String communicator;

    @Label("Rank")
    int rank;

    @Label("Size")
    @Description("The communicator's number of ranks")
    int size;

    @Label("Sequence")
    @Description("The communicator's sequence number of the operation (its issue order), the first of a group's")
    long sequence;

    @Label("Operation")
    @Description("allReduce, send, group, a module's operation (putSignal), ...")
    String operation;

    @Label("Bytes")
    @Description("The count argument times the element size (a group: the sum of its operations')")
    @DataAmount
    long bytes;

    @Label("Data Type")
    @Description("The element type of a single core operation; empty for groups and modules' operations")
    @Nullable String dataType;

    @Label("Peer or Root")
    @Description("The root of a rooted collective, the peer of a send or recv; -1 otherwise")
    int peer;

    @Label("Issuing Thread")
    Thread issuer;

    @Label("Issue to Launch")
    @Description("From the issue to the library's enqueue (and event record) returning on the launch thread; "
            + "N/A if the operation was never launched (refused, or failed before its launch)")
    @Timespan(Timespan.NANOSECONDS)
    long issueToLaunch = Long.MIN_VALUE;

    @Label("Outcome")
    @Description("success or error")
    String outcome;

    @Label("Exception")
    @Description("The exception the operation failed with, if it failed")
    @Nullable Class<?> exception;

    /** When it was issued, to place the launch; not recorded. */
    private transient long issuedNanos;

    private OperationEvent() {
    }

    /** Whether a recording wants this event now: no allocation, a few reads. */
    static boolean wanted() {
        return PROBE.isEnabled();
    }

    /** Begins the event of an operation issued now, on the issuing thread. */
    static OperationEvent issued(String communicator, int rank, int size, long sequence, String operation, long bytes,
                                 @Nullable String dataType, int peer) {
        OperationEvent e = new OperationEvent();
        e.begin();
        e.issuedNanos = System.nanoTime();
        e.communicator = communicator;
        e.rank = rank;
        e.size = size;
        e.sequence = sequence;
        e.operation = operation;
        e.bytes = bytes;
        e.dataType = dataType;
        e.peer = peer;
        e.issuer = Thread.currentThread();
        return e;
    }

    /**
     * The library's enqueue returned, on the launch thread, before the work is handed to the event thread (which
     * publishes this write to the completing thread).
     */
    public void launchReturned() {
        issueToLaunch = System.nanoTime() - issuedNanos;
    }

    /** The operation completed ({@code error} null) or failed: ends the event and commits it if it is wanted. */
    public void completed(@Nullable Throwable error) {
        end();
        if (!shouldCommit()) return;
        outcome = error == null ? "success" : "error";
        exception = error == null ? null : error.getClass();
        commit();
    }
}
