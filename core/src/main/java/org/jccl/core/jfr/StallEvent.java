package org.jccl.core.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A completion callback held jccl's event thread longer than {@code jccl.eventThread.stallWarning}: every
 * communicator's completions, deadlines and error checks waited meanwhile. Committed once per stall by the watchdog
 * when it sees the stall (within half the threshold after it passed it), with the event thread's stack at that moment:
 * where the callback is stuck.
 */
@Name(StallEvent.NAME)
@Label("jccl Event Thread Stall")
@Category("jccl")
@Description("A callback held jccl's event thread past jccl.eventThread.stallWarning")
@StackTrace(false) // the watchdog's own stack: the event thread's is in eventThreadStack
public final class StallEvent extends Event {
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "jccl.EventThreadStall";
    private static final int MAX_FRAMES = 32;

    @Label("Held For")
    @Description("How long the callback had held the event thread when the watchdog saw it")
    @Timespan(Timespan.NANOSECONDS)
    long heldFor;

    @Label("Threshold")
    @Description("jccl.eventThread.stallWarning")
    @Timespan(Timespan.NANOSECONDS)
    long threshold;

    @Label("Stalled Thread")
    @Description("jccl's event thread (JFR's own eventThread field is the watchdog that saw the stall)")
    Thread stalledThread;

    @Label("Event Thread Stack")
    @Description("Where the event thread was, innermost frame first")
    String eventThreadStack;

    private StallEvent() {
    }

    /** Commits the event now, if it is enabled. */
    static void record(Thread eventThread, StackTraceElement[] stack, long heldForNanos, long thresholdNanos) {
        StallEvent e = new StallEvent();
        if (!e.shouldCommit()) return;
        e.stalledThread = eventThread;
        e.eventThreadStack = format(stack);
        e.heldFor = heldForNanos;
        e.threshold = thresholdNanos;
        e.commit();
    }

    /** The innermost frames, one a line; a recorded string is kept short. */
    private static String format(StackTraceElement[] stack) {
        StringBuilder sb = new StringBuilder();
        int n = Math.min(stack.length, MAX_FRAMES);
        for (int i = 0; i < n; i++) sb.append(i == 0 ? "" : "\n").append(stack[i]);
        if (stack.length > n) sb.append("\n... ").append(stack.length - n).append(" more");
        return sb.toString();
    }
}
