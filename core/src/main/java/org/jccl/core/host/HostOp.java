package org.jccl.core.host;

import java.util.Objects;
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

    private HostOp(HostOp op, HostMemoryBlock send, int sendOffset) {
        this.comm = op.comm;
        this.kind = op.kind;
        this.type = op.type;
        this.count = op.count;
        this.peer = op.peer;
        this.send = send;
        this.sendOffset = sendOffset;
        this.recv = op.recv;
        this.recvOffset = op.recvOffset;
        this.bias = op.bias;
        this.biasOffset = op.biasOffset;
        this.reduction = op.reduction;
        this.counts = op.counts;
    }

    /**
     * RCCL's in-place allToAllv: send and receive are the same memory. Peers read this rank's send blocks while it
     * writes the blocks it receives, so such an operation must run from a copy of its send blocks.
     */
    boolean isInPlaceAllToAllv() {
        return kind == OpKind.ALL_TO_ALL_V && send != null && send == recv && sendOffset == recvOffset;
    }

    /** This operation reading from a copy of its send blocks, taken now; the caller releases the copy's block. */
    HostOp withSendCopy() {
        long[][] c = Objects.requireNonNull(counts, "allToAllv counts");
        HostMemoryBlock from = Objects.requireNonNull(send, "send");
        long elements = 0;
        for (int j = 0; j < c[0].length; j++) if (c[0][j] > 0) elements = Math.max(elements, c[1][j] + c[0][j]);
        int bytes = (int) (elements * type.size());
        HostMemoryBlock copy = HostMemoryBlock.allocate(Math.max(bytes, 1), from.kind());
        LocalClique.copy(from, sendOffset, copy, 0, bytes);
        return new HostOp(this, copy, 0);
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
