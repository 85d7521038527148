package org.jccl.core;

/** Every operation a communicator can issue; the method names are the same in every API shape. */
public enum OpKind {
    ALL_REDUCE("allReduce", true, false),
    BROADCAST("broadcast", false, true),
    REDUCE("reduce", true, true),
    ALL_GATHER("allGather", false, false),
    REDUCE_SCATTER("reduceScatter", true, false),
    GATHER("gather", false, true),
    SCATTER("scatter", false, true),
    ALL_TO_ALL("allToAll", false, false),
    /** RCCL's {@code ncclAllToAllv}: per-peer counts and displacements. */
    ALL_TO_ALL_V("allToAllv", false, false),
    /** RCCL's {@code ncclAllReduceWithBias}: the reduction of all ranks, then combined with a bias buffer. */
    ALL_REDUCE_WITH_BIAS("allReduceWithBias", true, false),
    SEND("send", false, false),
    RECV("recv", false, false);

    private final String method;
    private final boolean reduces;
    private final boolean rooted;

    OpKind(String method, boolean reduces, boolean rooted) {
        this.method = method;
        this.reduces = reduces;
        this.rooted = rooted;
    }

    /** The method name, e.g. {@code allReduce}. */
    public String method() {
        return method;
    }

    /** Whether the operation takes a reduction. */
    public boolean reduces() {
        return reduces;
    }

    /** Whether the operation takes a root rank. */
    public boolean rooted() {
        return rooted;
    }

    /** Whether the operation is point-to-point (takes a peer). */
    public boolean isPointToPoint() {
        return this == SEND || this == RECV;
    }

    @Override
    public String toString() {
        return method;
    }
}
