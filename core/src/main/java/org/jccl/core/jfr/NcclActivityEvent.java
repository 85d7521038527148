package org.jccl.core.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import jdk.jfr.Timestamp;
import org.jspecify.annotations.Nullable;

/**
 * One event NCCL's profiler reported to jccl's plugin ({@code jccl.nccl.profiler=on}): an API call (GroupApi,
 * CollApi, P2pApi), a kernel launch, a group, collective or point-to-point task NCCL scheduled, or a proxy operation
 * of the network path, attributed to the jccl operation whose library calls caused it by {@link #communicator} and
 * {@link #sequence}, the fields of its {@link OperationEvent}. Committed by the thread that drains the plugin
 * ({@code jccl-nccl-profiler}), within about 10 ms of NCCL's stop; its own time is in {@link #started} and
 * {@link #elapsed}.
 */
@Name(NcclActivityEvent.NAME)
@Label("NCCL Activity")
@Category({"jccl", "NCCL"})
@Description("An event of NCCL's profiler, attributed to the jccl operation that caused it")
@StackTrace(false) // committed by the draining thread: its stack says nothing of NCCL's
public final class NcclActivityEvent extends Event {
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "jccl.NcclActivity";

    @Label("Communicator")
    @Description("The jccl communicator's id (as in jccl.Operation); empty if NCCL reported it outside a jccl operation")
    String communicator;

    @Label("Sequence")
    @Description("The jccl operation's sequence number (as in jccl.Operation), -1 if none")
    long sequence;

    @Label("Kind")
    @Description("NCCL's event type: GroupApi, CollApi, P2pApi, KernelLaunch, Group, Coll, P2p, ProxyOp")
    String kind;

    @Label("Function")
    @Description("AllReduce, Send, ...; a proxy operation's direction (Send, Recv)")
    @Nullable String function;

    @Label("Count")
    @Description("Elements (API calls, Coll, P2p) or bytes (ProxyOp); -1 if NCCL gives none")
    long count;

    @Label("Data Type")
    @Nullable String dataType;

    @Label("Peer or Root")
    int peer;

    @Label("Channels")
    @Description("The channels of a Coll or P2p task, the channel of a proxy operation; -1 otherwise")
    int channels;

    @Label("Algorithm")
    @Nullable String algorithm;

    @Label("Protocol")
    @Nullable String protocol;

    @Label("NCCL Sequence")
    @Description("NCCL's count of earlier collectives of this function on the communicator (Coll); -1 otherwise")
    long ncclSequence;

    @Label("NCCL Communicator")
    @Description("NCCL's hash of the communicator, as its own log prints commHash")
    String ncclCommunicator;

    @Label("Rank")
    int rank;

    @Label("Started")
    @Timestamp(Timestamp.MILLISECONDS_SINCE_EPOCH)
    long started;

    @Label("Elapsed")
    @Description("From NCCL's start of the event to its stop (for tasks: host-side scheduling, not the kernel's run); "
            + "the event's own duration is 0, since it is committed after the fact")
    @Timespan(Timespan.NANOSECONDS)
    long elapsed;

    /** Asked whether the event is enabled; never begun or committed. */
    private static final NcclActivityEvent PROBE = new NcclActivityEvent();

    private NcclActivityEvent() {
    }

    /** Whether a recording wants these events now. */
    static boolean wanted() {
        return PROBE.isEnabled();
    }

    /** Commits {@code a} now, if the event is enabled. */
    static void record(NcclActivity a) {
        NcclActivityEvent e = new NcclActivityEvent();
        if (!e.shouldCommit()) return;
        e.communicator = a.communicator();
        e.sequence = a.sequence();
        e.kind = a.kind();
        e.function = a.function();
        e.count = a.count();
        e.dataType = a.dataType();
        e.peer = a.peer();
        e.channels = a.channels();
        e.algorithm = a.algorithm();
        e.protocol = a.protocol();
        e.ncclSequence = a.ncclSequence();
        e.ncclCommunicator = a.ncclCommunicator();
        e.rank = a.rank();
        e.started = a.startedMillis();
        e.elapsed = a.elapsedNanos();
        e.commit();
    }
}
