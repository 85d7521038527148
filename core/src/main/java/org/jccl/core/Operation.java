package org.jccl.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Arrays;
import org.jccl.core.error.Errors;
import org.jspecify.annotations.Nullable;

/**
 * One operation as data: what a communicator validates, a backend launches, and a group collects. Built with the
 * static factories, whose parameters follow the libraries' (NCCL's) argument order and count conventions:
 * {@code count} is the per-rank element count NCCL's function takes (for allGather the send count, for
 * reduceScatter the receive count, for allToAll the count sent to each peer).
 *
 * <p>In-place forms pass the same buffer (or NCCL's offset slice) for send and receive, per NCCL's pointer rules:
 * allGather in place when {@code send == recv.slice(rank * count * size, ...)}; reduceScatter in place when
 * {@code recv == send.slice(rank * count * size, ...)}.
 *
 * @param kind   the operation
 * @param send   the send buffer (null for recv; for broadcast/scatter only the root's is read)
 * @param recv   the receive buffer (null for send)
 * @param count  the element count as NCCL's function takes it
 * @param type   the element type
 * @param op     the reduction, for reducing kinds
 * @param peer   the root for rooted kinds, the peer for send/recv, else -1
 * @param counts allToAllv only: four arrays (send counts, send displacements, receive counts, receive
 *               displacements), each with one entry per rank, in elements
 * @param bias   allReduceWithBias only: the buffer of {@code count} elements combined with the result
 */
public record Operation(OpKind kind, @Nullable Buffer send, @Nullable Buffer recv, long count, DataType type,
                        @Nullable ReduceOp op, int peer, long @Nullable [][] counts, @Nullable Buffer bias) {

    public Operation {
        Errors.requireArgument(kind, "kind");
        Errors.requireArgument(type, "type");
        if (counts != null) {
            long[][] copy = new long[counts.length][];
            for (int i = 0; i < counts.length; i++) copy[i] = counts[i] == null ? null : counts[i].clone();
            counts = copy;
        }
    }

    /** The buffers it uses (send, receive, bias; those it has), for a group or step that must check them later. */
    List<Buffer> buffers() {
        List<Buffer> used = new ArrayList<>(3);
        for (Buffer b : new Buffer[] {send, recv, bias}) if (b != null) used.add(b);
        return used;
    }

    public static Operation allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op) {
        return new Operation(OpKind.ALL_REDUCE, send, recv, count, type, op, -1, null, null);
    }

    public static Operation broadcast(Buffer send, Buffer recv, long count, DataType type, int root) {
        return new Operation(OpKind.BROADCAST, send, recv, count, type, null, root, null, null);
    }

    public static Operation reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root) {
        return new Operation(OpKind.REDUCE, send, recv, count, type, op, root, null, null);
    }

    /** {@code sendCount} elements from each rank, gathered into {@code recv} in rank order. */
    public static Operation allGather(Buffer send, Buffer recv, long sendCount, DataType type) {
        return new Operation(OpKind.ALL_GATHER, send, recv, sendCount, type, null, -1, null, null);
    }

    /** Reduces {@code recvCount × nranks} elements and leaves block {@code rank} of the result in {@code recv}. */
    public static Operation reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op) {
        return new Operation(OpKind.REDUCE_SCATTER, send, recv, recvCount, type, op, -1, null, null);
    }

    public static Operation gather(Buffer send, Buffer recv, long sendCount, DataType type, int root) {
        return new Operation(OpKind.GATHER, send, recv, sendCount, type, null, root, null, null);
    }

    public static Operation scatter(Buffer send, Buffer recv, long recvCount, DataType type, int root) {
        return new Operation(OpKind.SCATTER, send, recv, recvCount, type, null, root, null, null);
    }

    /** Sends block {@code j} (of {@code count} elements) to rank {@code j}; receives block {@code j} from rank {@code j}. */
    public static Operation allToAll(Buffer send, Buffer recv, long count, DataType type) {
        return new Operation(OpKind.ALL_TO_ALL, send, recv, count, type, null, -1, null, null);
    }

    public static Operation allToAllv(Buffer send, long[] sendCounts, long[] sendDisplacements, Buffer recv,
                                      long[] recvCounts, long[] recvDisplacements, DataType type) {
        long[][] counts = {Errors.requireArgument(sendCounts, "sendCounts"),
                Errors.requireArgument(sendDisplacements, "sendDisplacements"),
                Errors.requireArgument(recvCounts, "recvCounts"),
                Errors.requireArgument(recvDisplacements, "recvDisplacements")};
        return new Operation(OpKind.ALL_TO_ALL_V, send, recv, 0, type, null, -1, counts, null);
    }

    public static Operation allReduceWithBias(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Buffer bias) {
        return new Operation(OpKind.ALL_REDUCE_WITH_BIAS, send, recv, count, type, op, -1, null,
                Errors.requireArgument(bias, "bias"));
    }

    public static Operation send(Buffer send, long count, DataType type, int peer) {
        return new Operation(OpKind.SEND, send, null, count, type, null, peer, null, null);
    }

    public static Operation recv(Buffer recv, long count, DataType type, int peer) {
        return new Operation(OpKind.RECV, null, recv, count, type, null, peer, null, null);
    }

    /** Whether send and receive are the same memory (NCCL's in-place form). */
    public boolean inPlace() {
        return send != null && recv != null && send.address() == recv.address();
    }

    /** The arrays of an allToAllv, as copies: the operation itself cannot be changed after validation. */
    @Override
    public long @Nullable [][] counts() {
        if (counts == null) return null;
        long[][] copy = new long[counts.length][];
        for (int i = 0; i < counts.length; i++) copy[i] = counts[i] == null ? null : counts[i].clone();
        return copy;
    }

    /** e.g. {@code allReduce(count=1048576, float32, sum)}, as messages and logs name it. */
    public String describe() {
        return describe(-1);
    }

    /** e.g. {@code allReduce(seq=17, count=1048576, float32, sum)}; no sequence if {@code sequence < 0}. */
    public String describe(long sequence) {
        StringBuilder sb = new StringBuilder(kind.method()).append('(');
        if (sequence >= 0) sb.append("seq=").append(sequence).append(", ");
        sb.append("count=").append(count).append(", ").append(type);
        if (op != null) sb.append(", ").append(op);
        if (kind.rooted()) sb.append(", root=").append(peer);
        if (kind.isPointToPoint()) sb.append(", peer=").append(peer);
        if (inPlace()) sb.append(", in-place");
        return sb.append(')').toString();
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return describe() + (counts == null ? "" : Arrays.deepToString(counts));
    }
}
