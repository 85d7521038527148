package org.jccl.core;

import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;
import org.jspecify.annotations.Nullable;

/**
 * Turns a validated {@link Operation} into what drivers receive ({@link LaunchOp}: memory positions and codes, no
 * application objects), and lists the memory a work must keep alive until it completes.
 */
final class Lowering {
    private Lowering() {
    }

    static LaunchOp lower(Operation op) {
        long[][] c = op.counts();
        LaunchOp.VarCounts counts = c == null ? null : new LaunchOp.VarCounts(c[0], c[1], c[2], c[3]);
        ReduceOp r = op.op();
        return new LaunchOp(op.kind(), op.count(), op.type(), r == null ? LaunchOp.NO_REDUCTION : r.code(), op.peer(),
                ref(op.send()), ref(op.recv()), ref(op.bias()), counts);
    }

    /** Every block the operation uses, once per use (each use is retained and released once). */
    static MemoryBlock[] heldMemory(Operation op) {
        MemoryBlock[] held = new MemoryBlock[uses(op)];
        int at = add(held, 0, op.send());
        at = add(held, at, op.recv());
        at = add(held, at, op.bias());
        if (op.op() instanceof PreMulSum p) add(held, at, p.deviceScalar());
        return held;
    }

    private static int uses(Operation op) {
        int n = (op.send() != null ? 1 : 0) + (op.recv() != null ? 1 : 0) + (op.bias() != null ? 1 : 0);
        return op.op() instanceof PreMulSum p && p.deviceScalar() != null ? n + 1 : n;
    }

    private static int add(MemoryBlock[] held, int at, @Nullable Buffer b) {
        if (b == null) return at;
        held[at] = b.block();
        return at + 1;
    }

    static @Nullable MemoryRef ref(@Nullable Buffer b) {
        return b == null ? null : b.ref();
    }
}
