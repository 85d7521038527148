package org.jccl.examples.bench;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;

/**
 * nccl-tests' #wrong column: fills every rank's input with a known pattern, runs the operation once, and counts the
 * output elements that differ from what the operation must produce. Inputs are small integers (1..5), so sums,
 * products, maxima and minima are exact in every checked type; avg is compared with a relative tolerance.
 */
final class DataCheck {
    private DataCheck() {
    }

    /** Whether results of {@code type} can be checked (the 16- and 8-bit float types are not, yet). */
    static boolean supports(DataType type) {
        return switch (type) {
            case INT8, UINT8, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64 -> true;
            default -> false;
        };
    }

    static double input(int rank, long i) {
        return (rank * 7L + i) % 5 + 1;
    }

    /** Writes the pattern into each rank's input buffer. */
    static void fillInputs(List<Communicator> comms, List<List<Operation>> ops, DataType type) {
        for (int r = 0; r < comms.size(); r++) {
            Buffer in = ops.get(r).get(0).send();
            if (in != null) write(in, in.byteSize() / type.size(), type, comms.get(r).rank());
        }
    }

    /** The number of wrong elements over this process's ranks after the operation ran once on the filled inputs. */
    static long countWrong(BenchOp op, List<Communicator> comms, List<List<Operation>> ops, long count, DataType type,
                           ReduceOp redop, int root) {
        int n = comms.get(0).size();
        long part = count / n;
        long wrong = 0;
        for (int local = 0; local < comms.size(); local++) {
            int r = comms.get(local).rank();
            Operation o = ops.get(local).get(ops.get(local).size() - 1);
            Buffer out = o.recv();
            if (out == null || (op.rooted && (op == BenchOp.REDUCE || op == BenchOp.GATHER) && r != root)) continue;
            long elements = switch (op) {
                case REDUCE_SCATTER, SCATTER -> part;
                case ALL_GATHER, ALL_TO_ALL, GATHER -> part * n;
                default -> count;
            };
            ByteBuffer host = read(out, elements, type);
            for (long i = 0; i < elements; i++) {
                double expected = expected(op, r, n, i, part, redop, root, type);
                double got = get(host, i, type);
                boolean ok = type.isFloatingPoint() ? Math.abs(got - expected) <= 1e-5 * Math.max(1, Math.abs(expected)) : got == expected;
                if (!ok) wrong++;
            }
        }
        return wrong;
    }

    private static double expected(BenchOp op, int rank, int n, long i, long part, ReduceOp redop, int root, DataType type) {
        return switch (op) {
            case ALL_REDUCE, REDUCE -> reduce(n, i, redop, type);
            case BROADCAST -> input(root, i);
            case ALL_GATHER, GATHER -> input((int) (i / part), i % part);
            case REDUCE_SCATTER -> reduce(n, rank * part + i, redop, type);
            case ALL_TO_ALL -> input((int) (i / part), rank * part + i % part);
            case SCATTER -> input(root, rank * part + i);
            case SEND_RECV -> input((rank + n - 1) % n, i);
        };
    }

    private static double reduce(int n, long i, ReduceOp redop, DataType type) {
        double acc = input(0, i);
        for (int r = 1; r < n; r++) {
            double v = input(r, i);
            if (redop == ReduceOp.PROD) acc *= v;
            else if (redop == ReduceOp.MAX) acc = Math.max(acc, v);
            else if (redop == ReduceOp.MIN) acc = Math.min(acc, v);
            else acc += v;
        }
        if (redop == ReduceOp.AVG) acc = type.isFloatingPoint() ? acc / n : Math.floor(acc / n);
        return wrap(acc, type);
    }

    /** Integer results wrap to the type's width, as the libraries' two's-complement arithmetic does. */
    private static double wrap(double v, DataType type) {
        long l = (long) v;
        return switch (type) {
            case INT8 -> (byte) l;
            case UINT8 -> l & 0xff;
            case INT32 -> (int) l;
            case UINT32 -> l & 0xffffffffL;
            default -> v;
        };
    }

    private static void write(Buffer b, long elements, DataType type, int rank) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (elements * type.size())).order(ByteOrder.nativeOrder());
        for (long i = 0; i < elements; i++) {
            double v = input(rank, i);
            switch (type) {
                case INT8, UINT8 -> host.put((byte) v);
                case INT32, UINT32 -> host.putInt((int) v);
                case INT64, UINT64 -> host.putLong((long) v);
                case FLOAT32 -> host.putFloat((float) v);
                case FLOAT64 -> host.putDouble(v);
                default -> throw new IllegalArgumentException("cannot check " + type);
            }
        }
        host.flip();
        b.write(0, host);
    }

    private static ByteBuffer read(Buffer b, long elements, DataType type) {
        ByteBuffer host = ByteBuffer.allocateDirect((int) (elements * type.size())).order(ByteOrder.nativeOrder());
        b.read(0, host);
        return host;
    }

    private static double get(ByteBuffer host, long i, DataType type) {
        int at = (int) (i * type.size());
        return switch (type) {
            case INT8 -> host.get(at);
            case UINT8 -> host.get(at) & 0xff;
            case INT32 -> host.getInt(at);
            case UINT32 -> host.getInt(at) & 0xffffffffL;
            case INT64, UINT64 -> host.getLong(at);
            case FLOAT32 -> host.getFloat(at);
            case FLOAT64 -> host.getDouble(at);
            default -> throw new IllegalArgumentException("cannot check " + type);
        };
    }
}
