package org.jccl.core;

import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;

/**
 * Checks an operation against its communicator before anything is enqueued, so a bad call changes nothing: the
 * library has the operation; buffers
 * present, open, on the communicator's device and large enough; roots and peers in range; the reduction valid for
 * the type; in-place forms exactly as NCCL defines them and no other overlap.
 */
final class Validation {
    private Validation() {
    }

    /** Argument checks only: a closed or aborted communicator fails the work at admission instead. */
    static void check(Communicator comm, Operation op) {
        int n = comm.size();
        int rank = comm.rank();
        long count = op.count();
        int size = op.type().size();
        Subject what = new Subject(comm, op);
        if (count < 0) throw bad(what, "count must not be negative");
        comm.backend().driver().checkSupported(op.kind());
        if (op.kind().rooted() || op.kind().isPointToPoint()) {
            String role = op.kind().rooted() ? "root" : "peer";
            if (op.peer() < 0 || op.peer() >= n) throw bad(what, role + " " + op.peer() + " is outside 0.." + (n - 1));
        }
        if (op.kind().reduces()) checkReduction(comm, op, what);
        boolean root = op.kind().rooted() && op.peer() == rank;
        switch (op.kind()) {
            case ALL_REDUCE -> {
                need(comm, op.send(), count, size, "send", what);
                need(comm, op.recv(), count, size, "recv", what);
                disjointUnlessSame(op, what);
            }
            case ALL_REDUCE_WITH_BIAS -> {
                need(comm, op.send(), count, size, "send", what);
                need(comm, op.recv(), count, size, "recv", what);
                need(comm, op.bias(), count, size, "bias", what);
                disjointUnlessSame(op, what);
            }
            case BROADCAST -> {
                if (root) need(comm, op.send(), count, size, "send", what);
                else optional(comm, op.send(), what, "send");
                need(comm, op.recv(), count, size, "recv", what);
                if (root) disjointUnlessSame(op, what);
            }
            case REDUCE -> {
                need(comm, op.send(), count, size, "send", what);
                if (root) need(comm, op.recv(), count, size, "recv", what);
                else optional(comm, op.recv(), what, "recv");
                if (root) disjointUnlessSame(op, what);
            }
            case ALL_GATHER -> {
                need(comm, op.send(), count, size, "send", what);
                need(comm, op.recv(), total(count, n, what), size, "recv", what);
                inPlaceAt(op.send(), op.recv(), rank * count * size, count * size, what, "send == recv + rank × sendCount");
            }
            case REDUCE_SCATTER -> {
                need(comm, op.send(), total(count, n, what), size, "send", what);
                need(comm, op.recv(), count, size, "recv", what);
                inPlaceAt(op.recv(), op.send(), rank * count * size, count * size, what, "recv == send + rank × recvCount");
            }
            case GATHER -> {
                need(comm, op.send(), count, size, "send", what);
                if (root) {
                    need(comm, op.recv(), total(count, n, what), size, "recv", what);
                    inPlaceAt(op.send(), op.recv(), rank * count * size, count * size, what, "send == recv + root × sendCount");
                } else {
                    optional(comm, op.recv(), what, "recv");
                }
            }
            case SCATTER -> {
                if (root) {
                    need(comm, op.send(), total(count, n, what), size, "send", what);
                    need(comm, op.recv(), count, size, "recv", what);
                    inPlaceAt(op.recv(), op.send(), rank * count * size, count * size, what, "recv == send + root × recvCount");
                } else {
                    optional(comm, op.send(), what, "send");
                    need(comm, op.recv(), count, size, "recv", what);
                }
            }
            case ALL_TO_ALL -> {
                need(comm, op.send(), total(count, n, what), size, "send", what);
                need(comm, op.recv(), total(count, n, what), size, "recv", what);
                disjoint(op.send(), op.recv(), what);
            }
            case ALL_TO_ALL_V -> checkAllToAllv(comm, op, n, size, what);
            case SEND -> need(comm, op.send(), count, size, "send", what);
            case RECV -> need(comm, op.recv(), count, size, "recv", what);
        }
    }

    /** {@code count × nranks} elements, or a clear error where the product does not fit a long. */
    private static long total(long count, int n, Subject what) {
        try {
            return Math.multiplyExact(count, (long) n);
        } catch (ArithmeticException e) {
            throw bad(what, "count " + count + " × " + n + " ranks overflows");
        }
    }

    private static void checkReduction(Communicator comm, Operation op, Subject what) {
        ReduceOp r = op.op();
        if (r == null) throw bad(what, "a reduction is required");
        if (r instanceof PreMulSum p) {
            p.checkUsableWith(comm, op.type());
        }
        String rejected = comm.backend().driver().rejects(op.type(), r.code(), comm.size());
        if (rejected != null) throw bad(what, rejected);
    }

    private static void checkAllToAllv(Communicator comm, Operation op, int n, int size, Subject what) {
        long[][] c = op.counts();
        if (c == null || c.length != 4) throw bad(what, "allToAllv needs send/recv counts and displacements");
        String[] names = {"sendCounts", "sendDisplacements", "recvCounts", "recvDisplacements"};
        for (int i = 0; i < 4; i++) {
            if (c[i] == null || c[i].length != n) throw bad(what, names[i] + " needs " + n + " entries (one per rank)");
            for (long v : c[i]) if (v < 0) throw bad(what, names[i] + " has a negative entry: " + v);
        }
        need(comm, op.send(), extent(c[0], c[1], what), size, "send", what);
        need(comm, op.recv(), extent(c[2], c[3], what), size, "recv", what);
        disjointUnlessSame(op, what); // RCCL runs it in place when send == recv
    }

    private static long extent(long[] counts, long[] displacements, Subject what) {
        long max = 0;
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] <= 0) continue;
            try {
                max = Math.max(max, Math.addExact(counts[i], displacements[i]));
            } catch (ArithmeticException e) {
                throw bad(what, "count " + counts[i] + " + displacement " + displacements[i] + " overflows");
            }
        }
        return max;
    }

    private static void need(Communicator comm, @Nullable Buffer b, long elements, int size, String role, Subject what) {
        if (b == null) throw bad(what, role + " buffer is required");
        if (b.isClosed()) throw new InvalidUsageException(what + ": " + role + " buffer " + b + " is closed");
        checkUsable(b, role, what);
        if (b.device() != comm.device()) {
            throw bad(what, role + " buffer " + b + " is on device " + b.device() + ", the communicator on " + comm.device());
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(elements, (long) size);
        } catch (ArithmeticException e) {
            throw bad(what, role + " size overflows: " + elements + " elements");
        }
        if (bytes > b.byteSize()) {
            throw bad(what, role + " buffer holds " + b.byteSize() + " bytes; the operation needs " + bytes
                    + " (" + elements + " elements of " + size + " bytes)");
        }
    }

    private static void optional(Communicator comm, @Nullable Buffer b, Subject what, String role) {
        if (b == null) return;
        if (b.isClosed()) throw new InvalidUsageException(what + ": " + role + " buffer " + b + " is closed");
        checkUsable(b, role, what);
        if (b.device() != comm.device()) throw bad(what, role + " buffer " + b + " is not on device " + comm.device());
    }

    /** Foreign memory whose owner freed it while the buffer was open: refused rather than handed to the library. */
    private static void checkUsable(Buffer b, String role, Subject what) {
        String gone = b.block().whyUnusable();
        if (gone != null) throw new InvalidUsageException(what + ": " + role + " buffer " + b + " cannot be used: " + gone);
    }

    /** Send and receive either are the same memory (in place) or do not overlap. */
    private static void disjointUnlessSame(Operation op, Subject what) {
        Buffer s = op.send();
        Buffer r = op.recv();
        if (s == null || r == null || s.address() == r.address()) return;
        disjoint(s, r, what);
    }

    private static void disjoint(@Nullable Buffer a, @Nullable Buffer b, Subject what) {
        if (a == null || b == null) return;
        if (overlaps(a.address(), a.byteSize(), b.address(), b.byteSize())) {
            throw bad(what, "send and recv overlap, which this operation does not allow (in-place is not defined for it, or the buffers only partly coincide)");
        }
    }

    /**
     * NCCL's in-place rule for gather-like operations: {@code small} may lie inside {@code big} only exactly at
     * {@code offset}; any other overlap is rejected.
     */
    private static void inPlaceAt(@Nullable Buffer small, @Nullable Buffer big, long offset, long bytes, Subject what, String rule) {
        if (small == null || big == null) return;
        if (!overlaps(small.address(), bytes, big.address(), big.byteSize())) return;
        if (small.address() != big.address() + offset) {
            throw bad(what, "send and recv overlap but not in NCCL's in-place form (" + rule + ")");
        }
    }

    private static boolean overlaps(long a, long aLen, long b, long bLen) {
        return aLen > 0 && bLen > 0 && a < b + bLen && b < a + aLen;
    }

    private static InvalidArgumentException bad(Subject what, String why) {
        return new InvalidArgumentException(what + ": " + why);
    }

    /**
     * What an error message names, e.g. {@code [comm=3f2a rank=0/2] allReduce(count=4, float32, sum)}: described only
     * when a check fails, since building the text costs more than all the checks of a valid call.
     */
    private record Subject(Communicator comm, Operation op) {
        @Override
        public String toString() {
            return comm.describe() + " " + op.describe();
        }
    }
}
