package org.jccl.core.host;

import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.Operation;
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

    HostOp(HostComm comm, Operation op, @Nullable Reduction reduction) {
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
        this.counts = op.counts();
    }

    private static @Nullable HostMemoryBlock block(@Nullable Buffer b) {
        return b == null ? null : (HostMemoryBlock) b.memoryBlock();
    }

    private static int offset(@Nullable Buffer b) {
        return b == null ? 0 : (int) b.offset();
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
