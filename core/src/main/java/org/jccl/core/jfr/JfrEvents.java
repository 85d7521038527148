package org.jccl.core.jfr;

import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The engine's one door to jccl's JFR events: each method does nothing, and touches no class of {@code jdk.jfr}, where
 * the runtime has no {@code jdk.jfr} module (an image made by {@code jlink} without it) or no recording wants the
 * event. Not API: applications record with JFR's own tools and {@link JfrSettings}.
 */
public final class JfrEvents {
    /** Whether the runtime has JFR at all; constant, so a JIT folds every check of it. */
    private static final boolean AVAILABLE = jfrPresent();

    private JfrEvents() {
    }

    private static boolean jfrPresent() {
        try {
            Class.forName("jdk.jfr.Event", false, JfrEvents.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Whether a recording wants {@link OperationEvent}s now: the check on every operation's issue path, which reads
     * a few fields and allocates nothing.
     */
    public static boolean operationWanted() {
        return AVAILABLE && OperationEvent.wanted();
    }

    /**
     * Begins the event of an operation issued now, on the issuing thread; call only where {@link #operationWanted()}.
     *
     * @param dataType its element type, or null for a group or a module's operation
     * @param peer     its root or peer, or -1
     */
    public static OperationEvent operationIssued(String communicator, int rank, int size, long sequence,
                                                 String operation, long bytes, @Nullable String dataType, int peer) {
        return OperationEvent.issued(communicator, rank, size, sequence, operation, bytes, dataType, peer);
    }

    /**
     * A lifecycle call made now, recorded when {@code result} completes (if a recording wants it).
     *
     * @param reason an abort's cause, else null
     */
    public static void lifecycle(String communicator, int rank, int size, String call, @Nullable String reason,
                                 CompletableFuture<?> result) {
        if (AVAILABLE) LifecycleEvent.record(communicator, rank, size, call, reason, result);
    }

    /**
     * A timeout acted on now.
     *
     * @param sequence   the work's, or -1 for a call, a creation or an abort
     * @param waitingFor what the rank waits for, as its backend reports it, else the usual cause
     */
    public static void timeout(String communicator, int rank, int size, long sequence, String what, long timeoutNanos,
                               @Nullable String waitingFor, boolean abortsCommunicator) {
        if (AVAILABLE) {
            TimeoutEvent.record(communicator, rank, size, sequence, what, timeoutNanos, waitingFor, abortsCommunicator);
        }
    }

    /** The event thread is held by a callback, at {@code stack}, for {@code heldForNanos} so far. */
    public static void stall(Thread eventThread, StackTraceElement[] stack, long heldForNanos, long thresholdNanos) {
        if (AVAILABLE) StallEvent.record(eventThread, stack, heldForNanos, thresholdNanos);
    }

    /** Whether a recording wants {@link NcclActivityEvent}s now: the profiler's drain decodes nothing when not. */
    public static boolean ncclActivityWanted() {
        return AVAILABLE && NcclActivityEvent.wanted();
    }

    /** One event of NCCL's profiler, committed now if a recording wants it. */
    public static void ncclActivity(NcclActivity activity) {
        if (AVAILABLE) NcclActivityEvent.record(activity);
    }
}
