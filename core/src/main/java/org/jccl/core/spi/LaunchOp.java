package org.jccl.core.spi;

import java.util.Objects;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jspecify.annotations.Nullable;

/**
 * One validated operation as a driver receives it: memory positions, counts, the element type, the reduction's
 * library code and the root or peer — values only, never the application's objects. Made by the engine after the
 * arguments were checked, so a driver may trust them.
 *
 * @param kind      the operation
 * @param count     the element count as NCCL's function takes it (see {@code Operation})
 * @param type      the element type
 * @param reduction the {@code ncclRedOp_t} code (built-in or a PreMulSum's), or {@link #NO_REDUCTION}
 * @param peer      the root for rooted kinds, the peer for send/recv, else -1
 * @param send      the send buffer's position, or null where the operation has none
 * @param recv      the receive buffer's position, or null
 * @param bias      allReduceWithBias's bias, or null
 * @param counts    allToAllv's counts and displacements, or null
 */
public record LaunchOp(OpKind kind, long count, DataType type, int reduction, int peer, @Nullable MemoryRef send,
                       @Nullable MemoryRef recv, @Nullable MemoryRef bias, @Nullable VarCounts counts) {
    /** The reduction code of operations that reduce nothing. */
    public static final int NO_REDUCTION = -1;

    public LaunchOp {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(type, "type");
    }

    /** The send buffer's address, or 0. */
    public long sendAddress() {
        return send == null ? 0 : send.address();
    }

    /** The receive buffer's address, or 0. */
    public long recvAddress() {
        return recv == null ? 0 : recv.address();
    }

    /**
     * allToAllv's per-peer counts and displacements in elements, one entry per rank. The arrays are the engine's
     * own copies; drivers only read them.
     */
    public record VarCounts(long[] sendCounts, long[] sendDisplacements, long[] recvCounts, long[] recvDisplacements) {
    }
}
