package org.jccl.core.host;

import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryRef;
import org.jspecify.annotations.Nullable;

/**
 * One operation resolved on the launch thread into what a stream task needs: memory blocks and byte offsets, the
 * resolved reduction, and the owning rank.
 */
final class HostOp {
    final HostComm comm;
    final OpKind kind;
    final DataType type;
    final long count;
    final int peer;
    final @Nullable HostMemoryBlock send;
    final int sendOffset;
    final @Nullable HostMemoryBlock recv;
    final int recvOffset;
    final @Nullable HostMemoryBlock bias;
    final int biasOffset;
    final @Nullable Reduction reduction;
    final long @Nullable [][] counts;

    HostOp(HostComm comm, LaunchOp op, @Nullable Reduction reduction) {
        this.comm = comm;
        this.kind = op.kind();
        this.type = op.type();
        this.count = op.count();
        this.peer = op.peer();
        this.send = block(op.send());
        this.sendOffset = offset(op.send());
        this.recv = block(op.recv());
        this.recvOffset = offset(op.recv());
        this.bias = block(op.bias());
        this.biasOffset = offset(op.bias());
        this.reduction = reduction;
        LaunchOp.VarCounts v = op.counts();
        this.counts = v == null ? null : new long[][] {v.sendCounts(), v.sendDisplacements(), v.recvCounts(), v.recvDisplacements()};
    }

    private static @Nullable HostMemoryBlock block(@Nullable MemoryRef m) {
        if (m == null) return null;
        if (m.block() instanceof HostMemoryBlock h) return h;
        throw new IllegalArgumentException(m.block() + " is not host-backend memory");
    }

    private static int offset(@Nullable MemoryRef m) {
        return m == null ? 0 : (int) m.offset();
    }

    /** The bytes this operation moves out of this rank, for the group estimate. */
    long bytes() {
        return count * type.size();
    }

    @Override
    public String toString() {
        return kind + "(count=" + count + ", " + type + (peer >= 0 ? ", peer/root=" + peer : "") + ")";
    }
}
