package org.jccl.core.host;

import org.jccl.core.DataType;
import org.jspecify.annotations.Nullable;

/**
 * A reduction as the host backend runs it, resolved for one operation.
 *
 * <p>The order is fixed and documented so results are reproducible bit for bit: for each element,
 * {@code acc = pre(x[0]); acc = round(acc ⊕ pre(x[1])); …; acc = round(acc ⊕ pre(x[n-1]))} over ranks 0..n-1 in
 * rank order, rounding to the element type after every binary operation. {@code pre} is the identity, except for
 * PreMulSum and floating-point avg, where it is {@code round(x × s)}. Floating avg is PreMulSum with
 * {@code s = 1/n} rounded to the element type (as NCCL does); integer avg is the wrapped sum divided by {@code n},
 * truncating (unsigned division for unsigned types). Integers wrap (two's complement); max/min of unsigned types
 * compare unsigned; floating max/min follow {@link Math#max}/{@link Math#min} (NaN wins, -0 < +0).
 *
 * @param kind        the operation
 * @param hostScalar  the PreMulSum scalar when {@code scalarBlock} is null
 * @param scalarBlock where a "device" scalar is read when the operation runs, or null
 * @param scalarOffset the scalar's byte offset in {@code scalarBlock}
 */
record Reduction(Kind kind, double hostScalar, @Nullable HostMemoryBlock scalarBlock, int scalarOffset) {
    /** The binary operator; {@link #AVG} and {@link #PREMUL_SUM} sum. */
    enum Kind { SUM, PROD, MAX, MIN, AVG, PREMUL_SUM }

    static Reduction builtIn(Kind kind) {
        return new Reduction(kind, 0, null, 0);
    }

    /** The scalar of a PreMulSum as a double, read now (from memory for a device scalar). */
    double scalar(DataType type) {
        if (scalarBlock == null) return hostScalar;
        var b = scalarBlock.bytes();
        int at = scalarOffset;
        return switch (type) {
            case INT8 -> b.get(at);
            case UINT8 -> b.get(at) & 0xff;
            case INT32 -> b.getInt(at);
            case UINT32 -> b.getInt(at) & 0xffffffffL;
            case INT64, UINT64 -> b.getLong(at);
            case FLOAT32 -> b.getFloat(at);
            case FLOAT64 -> b.getDouble(at);
            case FLOAT16 -> MiniFloat.FLOAT16.decode(b.getShort(at));
            case BFLOAT16 -> MiniFloat.BFLOAT16.decode(b.getShort(at));
            case FLOAT8_E4M3 -> MiniFloat.E4M3.decode(b.get(at));
            case FLOAT8_E5M2 -> MiniFloat.E5M2.decode(b.get(at));
        };
    }

    /** A device scalar of a 64-bit integer type, read exactly. */
    long integerScalar(DataType type) {
        if (scalarBlock != null && (type == DataType.INT64 || type == DataType.UINT64)) {
            return scalarBlock.bytes().getLong(scalarOffset);
        }
        return (long) scalar(type);
    }
}
