package org.jccl.examples.bench;

import java.util.Locale;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;

/**
 * The benchmarked operations, with nccl-tests' conventions: what "size" means for each, how many bytes each rank's
 * buffers need, and the bus-bandwidth factor that makes figures comparable across operations and rank counts.
 */
enum BenchOp {
    ALL_REDUCE("allreduce", true, false),
    BROADCAST("broadcast", false, true),
    REDUCE("reduce", true, true),
    ALL_GATHER("allgather", false, false),
    REDUCE_SCATTER("reducescatter", true, false),
    ALL_TO_ALL("alltoall", false, false),
    GATHER("gather", false, true),
    SCATTER("scatter", false, true),
    SEND_RECV("sendrecv", false, false);

    final String id;
    final boolean reduces;
    final boolean rooted;

    BenchOp(String id, boolean reduces, boolean rooted) {
        this.id = id;
        this.reduces = reduces;
        this.rooted = rooted;
    }

    static BenchOp parse(String s) {
        String t = s.toLowerCase(Locale.ROOT).replace("_", "");
        for (BenchOp op : values()) if (op.id.equals(t)) return op;
        throw new IllegalArgumentException("unknown operation " + s + "; one of allreduce, broadcast, reduce, allgather,"
                + " reducescatter, alltoall, gather, scatter, sendrecv");
    }

    /**
     * Elements in nccl-tests' "count" column for a given size in bytes: the total for gather-like operations
     * (allgather, reducescatter, alltoall, gather, scatter), whose size is the whole buffer, else per rank.
     */
    long count(long bytes, DataType type, int ranks) {
        long count = bytes / type.size();
        return switch (this) {
            case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, GATHER, SCATTER -> count / ranks * ranks;
            default -> count;
        };
    }

    /** Bytes each of the two buffers of a rank needs. */
    long bufferBytes(long count, DataType type) {
        return count * type.size();
    }

    /** nccl-tests' bus-bandwidth factor. */
    double busFactor(int n) {
        return switch (this) {
            case ALL_REDUCE -> 2.0 * (n - 1) / n;
            case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, GATHER, SCATTER -> (double) (n - 1) / n;
            default -> 1.0;
        };
    }

    /** The operation rank {@code rank} issues; {@code count} as {@link #count} gave it. */
    Operation operation(Communicator c, Buffer send, Buffer recv, long count, DataType type, ReduceOp redop,
                        int root, boolean inPlace) {
        int n = c.size();
        int r = c.rank();
        long size = type.size();
        long part = count / n;
        return switch (this) {
            case ALL_REDUCE -> Operation.allReduce(inPlace ? recv : send, recv, count, type, redop);
            case BROADCAST -> Operation.broadcast(inPlace ? recv : send, recv, count, type, root);
            case REDUCE -> Operation.reduce(inPlace ? recv : send, recv, count, type, redop, root);
            case ALL_GATHER -> Operation.allGather(inPlace ? recv.slice(r * part * size, part * size) : send, recv, part, type);
            case REDUCE_SCATTER -> Operation.reduceScatter(send, inPlace ? send.slice(r * part * size, part * size) : recv, part, type, redop);
            case ALL_TO_ALL -> Operation.allToAll(send, recv, part, type);
            case GATHER -> Operation.gather(inPlace && r == root ? recv.slice(r * part * size, part * size) : send, recv, part, type, root);
            case SCATTER -> Operation.scatter(send, inPlace && r == root ? send.slice(r * part * size, part * size) : recv, part, type, root);
            case SEND_RECV -> throw new IllegalStateException("sendrecv is a pair: see pair()");
        };
    }

    /** For sendrecv: rank r sends to r+1 and receives from r-1, in one group (nccl-tests' sendrecv). */
    Operation[] pair(Communicator c, Buffer send, Buffer recv, long count, DataType type) {
        int n = c.size();
        int r = c.rank();
        return new Operation[] {Operation.send(send, count, type, (r + 1) % n), Operation.recv(recv, count, type, (r + n - 1) % n)};
    }
}
