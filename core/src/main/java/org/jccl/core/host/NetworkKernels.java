package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import org.jccl.core.DataType;
import org.jspecify.annotations.Nullable;

/**
 * The collectives of a {@link NetworkClique}, run on its rank's stream thread. Reductions keep LocalClique's
 * element ownership and rank order, so results are bit-identical to the in-JVM backend (see the clique's
 * description); the staging blocks and argument arrays are made once per clique, the first time they are needed.
 */
final class NetworkKernels {
    /** Chunks of reduction contributions a rank sends ahead of the chunk it reduces. */
    private static final int LOOKAHEAD = 8;
    private final NetworkClique clique;
    private final int n;
    private final int r;
    private @Nullable HostMemoryBlock[] stage;
    private @Nullable HostMemoryBlock[] scalars;
    private @Nullable HostMemoryBlock out;
    private final HostMemoryBlock[] srcs;
    private final int[] srcOff;
    private final Reduction[] reds;
    private final HostMemoryBlock[] dst = new HostMemoryBlock[1];
    private final int[] dstOff = new int[1];
    private final int[] biasOff = new int[1];

    NetworkKernels(NetworkClique clique) {
        this.clique = clique;
        this.n = clique.size();
        this.r = clique.rank();
        this.srcs = new HostMemoryBlock[n];
        this.srcOff = new int[n];
        this.reds = new Reduction[n];
    }

    private synchronized void allocate() {
        if (stage != null) return;
        stage = new HostMemoryBlock[n];
        scalars = new HostMemoryBlock[n];
        for (int j = 0; j < n; j++) {
            if (j == r) continue;
            stage[j] = Frames.staging(Wire.CHUNK);
            scalars[j] = Frames.staging(8);
        }
        out = Frames.staging(Wire.CHUNK);
    }

    void run(HostOp op) {
        int desc = Frames.describe(op);
        int esize = op.type.size();
        long count = op.count;
        long bytes = count * esize;
        switch (op.kind) {
            case ALL_REDUCE, ALL_REDUCE_WITH_BIAS, REDUCE -> reduceByRange(op, desc);
            case REDUCE_SCATTER -> {
                long[] off = new long[n];
                long[] len = new long[n];
                for (int j = 0; j < n; j++) {
                    off[j] = j * bytes;
                    len[j] = bytes;
                }
                reduceOwned(op, desc, off, len, (c, at, size) -> {
                    dst[0] = op.recv;
                    dstOff[0] = (int) (op.recvOffset + at);
                }, null);
            }
            case BROADCAST -> broadcast(op, desc, bytes);
            case ALL_GATHER -> {
                for (int k = 1; k < n; k++) clique.send((r + k) % n, Wire.LANE_GATHER, desc, op.send, op.sendOffset, bytes, null, op.type);
                LocalClique.copy(op.send, op.sendOffset, op.recv, op.recvOffset + r * bytes, bytes);
                for (int k = 1; k < n; k++) {
                    int j = (r - k + n) % n;
                    clique.receive(j, Wire.LANE_GATHER, desc, op.recv, op.recvOffset + j * bytes, bytes, sizeMismatch(op, j));
                }
            }
            case GATHER -> {
                int root = op.peer;
                if (r != root) {
                    clique.send(root, Wire.LANE_GATHER, desc, op.send, op.sendOffset, bytes, null, op.type);
                } else {
                    LocalClique.copy(op.send, op.sendOffset, op.recv, op.recvOffset + r * bytes, bytes);
                    for (int j = 0; j < n; j++) {
                        if (j != r) clique.receive(j, Wire.LANE_GATHER, desc, op.recv, op.recvOffset + j * bytes, bytes, sizeMismatch(op, j));
                    }
                }
            }
            case SCATTER -> {
                int root = op.peer;
                if (r == root) {
                    for (int k = 1; k < n; k++) {
                        int j = (r + k) % n;
                        clique.send(j, Wire.LANE_SCATTER, desc, op.send, op.sendOffset + j * bytes, bytes, null, op.type);
                    }
                    LocalClique.copy(op.send, op.sendOffset + r * bytes, op.recv, op.recvOffset, bytes);
                } else {
                    clique.receive(root, Wire.LANE_SCATTER, desc, op.recv, op.recvOffset, bytes, sizeMismatch(op, root));
                }
            }
            case ALL_TO_ALL -> {
                for (int k = 1; k < n; k++) {
                    int j = (r + k) % n;
                    clique.send(j, Wire.LANE_SCATTER, desc, op.send, op.sendOffset + j * bytes, bytes, null, op.type);
                }
                LocalClique.copy(op.send, op.sendOffset + r * bytes, op.recv, op.recvOffset + r * bytes, bytes);
                clique.awaitWrites(); // in place, the blocks just sent are overwritten next
                for (int k = 1; k < n; k++) {
                    int j = (r - k + n) % n;
                    clique.receive(j, Wire.LANE_SCATTER, desc, op.recv, op.recvOffset + j * bytes, bytes, sizeMismatch(op, j));
                }
            }
            case ALL_TO_ALL_V -> allToAllv(op, desc, esize);
            default -> throw new IllegalStateException(op.kind + " is not a collective");
        }
        // Frames refer to the operation's buffers until written: the operation completes only then.
        clique.awaitWrites();
    }

    private NetworkClique.Mismatch sizeMismatch(HostOp op, int peer) {
        return sent -> "rank " + peer + " sends " + sent + " bytes of " + op + ", rank " + r + " expects another size";
    }

    private void allToAllv(HostOp op, int desc, int esize) {
        long[][] c = op.counts;
        if (c == null) throw new IllegalStateException("allToAllv without counts");
        for (int k = 1; k < n; k++) {
            int j = (r + k) % n;
            clique.send(j, Wire.LANE_SCATTER, desc, op.send, op.sendOffset + c[1][j] * esize, c[0][j] * esize, null, op.type);
        }
        if (c[0][r] != c[2][r]) {
            throw clique.disagreement("allToAllv: rank " + r + " sends " + c[0][r] + " elements to rank " + r
                    + ", which expects " + c[2][r]);
        }
        LocalClique.copy(op.send, op.sendOffset + c[1][r] * esize, op.recv, op.recvOffset + c[3][r] * esize, c[0][r] * esize);
        clique.awaitWrites();
        for (int k = 1; k < n; k++) {
            int j = (r - k + n) % n;
            long expected = c[2][j];
            clique.receive(j, Wire.LANE_SCATTER, desc, op.recv, op.recvOffset + c[3][j] * esize, expected * esize,
                    sent -> "allToAllv: rank " + j + " sends " + (sent / esize) + " elements to rank " + r
                            + ", which expects " + expected);
        }
    }

    /** A pipelined chain from the root: each rank keeps a frame and passes it on, so the root sends once. */
    private void broadcast(HostOp op, int desc, long bytes) {
        int root = op.peer;
        int position = (r - root + n) % n;
        int next = (r + 1) % n;
        int prev = (r - 1 + n) % n;
        if (position == 0) {
            if (n > 1) clique.send(next, Wire.LANE_SCATTER, desc, op.send, op.sendOffset, bytes, null, op.type);
            LocalClique.copy(op.send, op.sendOffset, op.recv, op.recvOffset, bytes);
            return;
        }
        long done = 0;
        do {
            int len = (int) Math.min(Wire.CHUNK, bytes - done);
            ByteBuf frame = clique.take(prev, Wire.LANE_SCATTER, desc, bytes, len, sizeMismatch(op, prev));
            try {
                Frames.copyPayload(frame, op.recv, op.recvOffset + done, len);
                if (position < n - 1) clique.forward(next, frame);
            } finally {
                frame.release();
            }
            done += len;
        } while (done < bytes);
    }

    /** Reduce, allReduce and allReduceWithBias: rank j owns elements {@code [count·j/n, count·(j+1)/n)}. */
    private void reduceByRange(HostOp op, int desc) {
        int esize = op.type.size();
        long[] off = new long[n];
        long[] len = new long[n];
        for (int j = 0; j < n; j++) {
            long lo = op.count * j / n;
            long hi = op.count * (j + 1) / n;
            off[j] = lo * esize;
            len[j] = (hi - lo) * esize;
        }
        boolean toRoot = op.kind == org.jccl.core.OpKind.REDUCE;
        int root = op.peer;
        if (toRoot && r != root) {
            allocate();
            reduceOwned(op, desc, off, len, (c, at, size) -> {
                dst[0] = out;
                dstOff[0] = 0;
            }, (at, size) -> clique.sendFrameCopied(root, Wire.LANE_GATHER, desc, len[r], out, 0, size, null, op.type));
            return;
        }
        reduceOwned(op, desc, off, len, (c, at, size) -> {
            dst[0] = op.recv;
            dstOff[0] = (int) (op.recvOffset + off[r] + at);
        }, toRoot ? null : (at, size) -> {
            for (int k = 1; k < n; k++) {
                clique.sendFrame((r + k) % n, Wire.LANE_GATHER, desc, len[r], op.recv, op.recvOffset + off[r] + at, size,
                        null, op.type);
            }
        });
        // In place, the contributions sent from the other ranks' parts are about to be overwritten.
        clique.awaitWrites();
        for (int k = 1; k < n; k++) {
            int j = (r - k + n) % n;
            clique.receive(j, Wire.LANE_GATHER, desc, op.recv, op.recvOffset + off[j], len[j], sizeMismatch(op, j));
        }
        if (op.kind == org.jccl.core.OpKind.ALL_REDUCE_WITH_BIAS) addBias(op);
    }

    /**
     * Combines the reduced result with this rank's bias exactly as LocalClique's kernel does: the same kernel,
     * one source (the stored, already rounded result) and the bias operator (sum for avg and PreMulSum).
     */
    private void addBias(HostOp op) {
        Reduction.Kind k = op.reduction == null ? Reduction.Kind.SUM : op.reduction.kind();
        Reduction.Kind biasKind = (k == Reduction.Kind.AVG || k == Reduction.Kind.PREMUL_SUM) ? Reduction.Kind.SUM : k;
        HostMemoryBlock[] one = {op.recv};
        int[] oneOff = {op.recvOffset};
        HostMemoryBlock[] bias = {op.bias};
        int[] bOff = {op.biasOffset};
        Reducer.reduce(op.type, new Reduction[] {Reduction.builtIn(biasKind)}, 1, one, oneOff, 1, one, oneOff.clone(),
                bias, bOff, op.count);
    }

    /** Where an owned chunk's result goes: sets {@code dst[0]}/{@code dstOff[0]}. */
    private interface Destination {
        void place(int chunk, long at, int size);
    }

    /** What to do with an owned chunk once reduced (send it on). */
    private interface AfterChunk {
        void sent(long at, int size);
    }

    /**
     * The reduce-scatter core: every rank sends rank j the part {@code [off[j], off[j]+len[j])} of its send
     * buffer, chunk by chunk; this rank folds the n contributions to its own part in rank order as they arrive.
     */
    private void reduceOwned(HostOp op, int desc, long[] off, long[] len, Destination where, @Nullable AfterChunk after) {
        allocate();
        DataType type = op.type;
        Reduction mine = op.reduction;
        if (mine == null) throw new IllegalStateException(op + " has no reduction");
        int maxChunks = 1;
        for (int j = 0; j < n; j++) maxChunks = Math.max(maxChunks, chunks(len[j]));
        int issued = 0;
        for (int c = 0; c < maxChunks; c++) {
            long at = (long) c * Wire.CHUNK;
            // Keep LOOKAHEAD chunks of contributions in flight, so the peers never wait for this rank's next send.
            for (; issued < Math.min(maxChunks, c + LOOKAHEAD); issued++) {
                long from = (long) issued * Wire.CHUNK;
                for (int k = 1; k < n; k++) {
                    int j = (r + k) % n;
                    if (issued < chunks(len[j])) {
                        clique.sendFrame(j, Wire.LANE_SCATTER, desc, len[j], op.send, op.sendOffset + off[j] + from,
                                (int) Math.min(Wire.CHUNK, len[j] - from), mine, type);
                    }
                }
            }
            if (c >= chunks(len[r])) continue;
            int size = (int) Math.min(Wire.CHUNK, len[r] - at);
            for (int j = 0; j < n; j++) {
                if (j == r) {
                    srcs[j] = op.send;
                    srcOff[j] = (int) (op.sendOffset + off[r] + at);
                    reds[j] = mine;
                    continue;
                }
                int peer = j;
                ByteBuf frame = clique.take(j, Wire.LANE_SCATTER, desc, len[r], size,
                        sent -> "rank " + peer + " contributes " + sent + " bytes to rank " + r + "'s part of " + op
                                + ", which expects " + len[r]);
                try {
                    Frames.copyPayload(frame, stage[j], 0, size);
                    reds[j] = Frames.reductionOf(frame, mine, type, scalars[j]);
                } finally {
                    frame.release();
                }
                srcs[j] = stage[j];
                srcOff[j] = 0;
            }
            where.place(c, at, size);
            Reducer.reduce(type, reds, n, srcs, srcOff, 1, dst, dstOff, null, biasOff, size / type.size());
            if (after != null) after.sent(at, size);
        }
    }

    private static int chunks(long bytes) {
        return (int) Math.max(1, (bytes + Wire.CHUNK - 1) / Wire.CHUNK);
    }
}
