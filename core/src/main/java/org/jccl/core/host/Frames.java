package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.jccl.core.DataType;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * The data frames host ranks exchange (layout in {@link Wire}): how one is built, and what the receiving side reads
 * from it. Stateless; used by the clique's messages, its RMA lane and its kernels.
 */
final class Frames {
    /** The description of control messages (no operation has it: descriptions of operations are never 0x5eed). */
    static final int CONTROL = 0x5eed;

    private Frames() {
    }

    /**
     * A data frame on {@code lane}: the header, then {@code len} bytes of {@code block} from {@code offset}, copied
     * into the frame ({@code copy}) or referred to, in which case the range must not change until the frame was
     * written.
     */
    static ByteBuf data(int lane, int flags, int desc, long total, double auxDouble, long auxLong,
                        @Nullable HostMemoryBlock block, long offset, int len, boolean copy) {
        if (len > 0 && block == null) throw new IllegalStateException("missing buffer");
        ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer(Wire.DATA_HEADER + (copy ? len : 0));
        try {
            frame.writeByte(Wire.DATA).writeByte(lane).writeByte(flags).writeInt(desc).writeLong(total)
                    .writeDouble(auxDouble).writeLong(auxLong);
            if (len > 0) {
                ByteBuffer src = block.bytes().duplicate();
                src.limit((int) offset + len).position((int) offset);
                if (copy) {
                    frame.writeBytes(src);
                } else {
                    frame = Unpooled.wrappedBuffer(frame, Unpooled.wrappedBuffer(src));
                }
            }
            return frame;
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    static void copyPayload(ByteBuf frame, @Nullable HostMemoryBlock block, long offset, int len) {
        if (len == 0) return;
        if (block == null) throw new IllegalStateException("missing buffer");
        ByteBuffer dst = block.bytes().duplicate();
        dst.limit((int) offset + len).position((int) offset);
        frame.getBytes(Wire.DATA_HEADER, dst);
    }

    /** The reduction a peer's frame carries (its own PreMulSum scalar), into {@code scalarBlock} when raw bytes. */
    static Reduction reductionOf(ByteBuf frame, Reduction mine, DataType type, HostMemoryBlock scalarBlock) {
        if (mine.kind() != Reduction.Kind.PREMUL_SUM) return mine;
        if ((frame.getByte(Wire.AT_FLAGS) & Wire.FLAG_SCALAR_BYTES) != 0) {
            long raw = frame.getLong(Wire.AT_AUX_LONG);
            for (int i = 0; i < type.size(); i++) scalarBlock.bytes().put(i, (byte) (raw >>> (8 * i)));
            return new Reduction(Reduction.Kind.PREMUL_SUM, 0, scalarBlock, 0);
        }
        return new Reduction(Reduction.Kind.PREMUL_SUM, frame.getDouble(Wire.AT_AUX_DOUBLE), null, 0);
    }

    /** A fresh host block for staging (kernels keep theirs for the clique's life). */
    static HostMemoryBlock staging(long bytes) {
        return HostMemoryBlock.allocate(Math.max(8, bytes), MemoryKind.DEVICE);
    }

    /** Operation descriptions, equal on every rank that runs the same operation. */
    static int describe(HostOp op) {
        int h = op.kind.ordinal();
        h = h * 31 + op.type.ordinal();
        h = h * 31 + Long.hashCode(op.count);
        h = h * 31 + (op.kind.rooted() ? op.peer : -1);
        h = h * 31 + (op.reduction == null ? -1 : op.reduction.kind().ordinal());
        return h == 0 || h == CONTROL ? 1 : h;
    }
}
