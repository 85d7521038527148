package org.jccl.core.matrix;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;

/**
 * The plain sequential reference every backend is checked against: element by element, ranks folded in order
 * 0..n-1, each binary operation computed exactly (in {@code double} or {@code long}) and rounded or wrapped to the
 * element type at once. It mirrors the documented host-backend semantics, not the backend's code.
 */
public final class Reference {
    /** A reduction as the reference applies it. */
    public enum Kind { SUM, PROD, MAX, MIN, AVG, PREMUL_SUM }

    private Reference() {
    }

    /** Element {@code i} of {@code b} as an exact value: {@code long} bits widened for integers, else the value. */
    public static double floatAt(DataType t, ByteBuffer b, int i) {
        return switch (t) {
            case FLOAT32 -> b.getFloat(i * 4);
            case FLOAT64 -> b.getDouble(i * 8);
            case FLOAT16, BFLOAT16 -> FloatFormats.of(t).decode(b.getShort(i * 2));
            case FLOAT8_E4M3, FLOAT8_E5M2 -> FloatFormats.of(t).decode(b.get(i));
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** Integer element {@code i}, sign- or zero-extended. */
    public static long longAt(DataType t, ByteBuffer b, int i) {
        return switch (t) {
            case INT8 -> b.get(i);
            case UINT8 -> b.get(i) & 0xff;
            case INT32 -> b.getInt(i * 4);
            case UINT32 -> b.getInt(i * 4) & 0xffffffffL;
            case INT64, UINT64 -> b.getLong(i * 8);
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** Stores a floating value, rounding it to the type. */
    public static void putFloat(DataType t, ByteBuffer b, int i, double v) {
        switch (t) {
            case FLOAT32 -> b.putFloat(i * 4, (float) v);
            case FLOAT64 -> b.putDouble(i * 8, v);
            case FLOAT16, BFLOAT16 -> b.putShort(i * 2, (short) FloatFormats.of(t).encode(v));
            case FLOAT8_E4M3, FLOAT8_E5M2 -> b.put(i, (byte) FloatFormats.of(t).encode(v));
            default -> throw new IllegalArgumentException(t.toString());
        }
    }

    /** Stores an integer value, wrapping it to the type. */
    public static void putLong(DataType t, ByteBuffer b, int i, long v) {
        switch (t) {
            case INT8, UINT8 -> b.put(i, (byte) v);
            case INT32, UINT32 -> b.putInt(i * 4, (int) v);
            case INT64, UINT64 -> b.putLong(i * 8, v);
            default -> throw new IllegalArgumentException(t.toString());
        }
    }

    static double round(DataType t, double v) {
        return switch (t) {
            case FLOAT32 -> (float) v;
            case FLOAT64 -> v;
            default -> FloatFormats.of(t).round(v);
        };
    }

    static long wrap(DataType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xff;
            case INT32 -> (int) v;
            case UINT32 -> v & 0xffffffffL;
            default -> v;
        };
    }

    /**
     * Reduces element {@code i} of every input into {@code out} at {@code outIndex}.
     *
     * @param scalars each rank's PreMulSum scalar (ignored for other kinds)
     */
    public static void reduce(DataType t, Kind kind, double[] scalars, ByteBuffer[] inputs, int i, ByteBuffer out, int outIndex) {
        reduce(t, kind, scalars, inputs, i, out, outIndex, 0);
    }

    /**
     * As {@link #reduce(DataType, Kind, double[], ByteBuffer[], int, ByteBuffer, int)}, folding floating values in the
     * order {@code first, first + 1, …, first - 1} (ranks modulo n) instead of from rank 0: how a ring adds them. Rounding
     * each step makes fp8 results depend on that order.
     */
    public static void reduce(DataType t, Kind kind, double[] scalars, ByteBuffer[] inputs, int i, ByteBuffer out, int outIndex,
                              int first) {
        int n = inputs.length;
        if (t.isFloatingPoint()) {
            double acc = 0;
            for (int k = 0; k < n; k++) {
                int r = (first + k) % n;
                double x = floatAt(t, inputs[r], i);
                if (kind == Kind.AVG) x = round(t, x * round(t, 1.0 / n));
                if (kind == Kind.PREMUL_SUM) x = round(t, x * round(t, scalars[r]));
                if (k == 0) {
                    acc = x;
                    continue;
                }
                acc = switch (kind) {
                    case SUM, AVG, PREMUL_SUM -> round(t, acc + x);
                    case PROD -> round(t, acc * x);
                    case MAX -> Math.max(acc, x);
                    case MIN -> Math.min(acc, x);
                };
            }
            putFloat(t, out, outIndex, acc);
        } else {
            long acc = 0;
            for (int r = 0; r < n; r++) {
                long x = longAt(t, inputs[r], i);
                if (kind == Kind.PREMUL_SUM) x = wrap(t, x * wrap(t, (long) scalars[r]));
                if (r == 0) {
                    acc = x;
                    continue;
                }
                acc = switch (kind) {
                    case SUM, AVG, PREMUL_SUM -> wrap(t, acc + x);
                    case PROD -> wrap(t, acc * x);
                    case MAX -> compare(t, acc, x) >= 0 ? acc : x;
                    case MIN -> compare(t, acc, x) <= 0 ? acc : x;
                };
            }
            if (kind == Kind.AVG) acc = t.isUnsigned() ? Long.divideUnsigned(acc, n) : acc / n;
            putLong(t, out, outIndex, acc);
        }
    }

    /** Combines a reduced element with a bias element: sum, avg and PreMulSum add it; the others apply their op. */
    public static void applyBias(DataType t, Kind kind, ByteBuffer reduced, ByteBuffer bias, int i, ByteBuffer out) {
        if (t.isFloatingPoint()) {
            double a = floatAt(t, reduced, i);
            double b = floatAt(t, bias, i);
            double v = switch (kind) {
                case PROD -> round(t, a * b);
                case MAX -> Math.max(a, b);
                case MIN -> Math.min(a, b);
                default -> round(t, a + b);
            };
            putFloat(t, out, i, v);
        } else {
            long a = longAt(t, reduced, i);
            long b = longAt(t, bias, i);
            long v = switch (kind) {
                case PROD -> wrap(t, a * b);
                case MAX -> compare(t, a, b) >= 0 ? a : b;
                case MIN -> compare(t, a, b) <= 0 ? a : b;
                default -> wrap(t, a + b);
            };
            putLong(t, out, i, v);
        }
    }

    private static int compare(DataType t, long a, long b) {
        return t.isUnsigned() ? Long.compareUnsigned(a, b) : Long.compare(a, b);
    }

    /** A zeroed native-order heap buffer of {@code elements} of {@code t}. */
    public static ByteBuffer allocate(DataType t, long elements) {
        return ByteBuffer.allocate((int) (elements * t.size())).order(ByteOrder.nativeOrder());
    }

    /** Whether {@code kind} reads a reduction. */
    public static boolean reduces(OpKind kind) {
        return kind.reduces();
    }
}
