package org.jccl.core.nccl;

import org.jccl.core.DataType;

/**
 * A {@code double} as the bytes of one element of a data type (little-endian), for
 * {@code ncclRedOpCreatePreMulSum}'s host scalar: integers truncate toward zero, floats round to nearest even,
 * half/bfloat16/fp8 as their bit patterns (E4M3 saturates to ±448, as it has no infinity).
 */
final class ScalarEncoding {
    private ScalarEncoding() {
    }

    /** The element's bytes, {@code type.size()} of them. */
    static byte[] encode(double value, DataType type) {
        long bits = switch (type) {
            case INT8, UINT8, INT32, UINT32, INT64, UINT64 -> (long) value;
            case FLOAT32 -> Float.floatToRawIntBits((float) value) & 0xffffffffL;
            case FLOAT64 -> Double.doubleToRawLongBits(value);
            case FLOAT16 -> minifloat(value, 5, 10, false);
            case BFLOAT16 -> minifloat(value, 8, 7, false);
            case FLOAT8_E5M2 -> minifloat(value, 5, 2, false);
            case FLOAT8_E4M3 -> minifloat(value, 4, 3, true);
        };
        byte[] out = new byte[type.size()];
        for (int i = 0; i < out.length; i++) out[i] = (byte) (bits >>> (8 * i));
        return out;
    }

    /**
     * Rounds {@code value} to a binary float with {@code exponentBits} and {@code mantissaBits} (IEEE-like bias),
     * nearest even. {@code finiteOnly}: the E4M3 convention (no infinities; all-ones exponent with all-ones mantissa
     * is NaN; overflow saturates to the largest finite value).
     */
    static int minifloat(double value, int exponentBits, int mantissaBits, boolean finiteOnly) {
        int bias = (1 << (exponentBits - 1)) - 1;
        int maxExponentField = (1 << exponentBits) - 1;
        int sign = (Double.doubleToRawLongBits(value) < 0) ? 1 << (exponentBits + mantissaBits) : 0;
        int mantissaMask = (1 << mantissaBits) - 1;
        int nan = finiteOnly ? (maxExponentField << mantissaBits) | mantissaMask : (maxExponentField << mantissaBits) | (1 << (mantissaBits - 1));
        int largestFinite = finiteOnly ? (maxExponentField << mantissaBits) | (mantissaMask - 1) : ((maxExponentField - 1) << mantissaBits) | mantissaMask;
        int infinity = maxExponentField << mantissaBits;
        if (Double.isNaN(value)) return sign | nan;
        double a = Math.abs(value);
        if (Double.isInfinite(a)) return sign | (finiteOnly ? largestFinite : infinity);
        if (a == 0) return sign;
        int e = Math.getExponent(a);
        int result;
        if (e < 1 - bias) {
            // subnormal: units of 2^(1 - bias - mantissaBits); a carry into the exponent field is the right encoding
            result = (int) Math.rint(Math.scalb(a, bias - 1 + mantissaBits));
        } else {
            long m = (long) Math.rint(Math.scalb(a, mantissaBits - e));
            if (m == 1L << (mantissaBits + 1)) {
                m >>= 1;
                e++;
            }
            long field = (long) (e + bias);
            result = (int) ((field << mantissaBits) | (m & mantissaMask));
        }
        if (finiteOnly ? result > largestFinite : result >= infinity) result = finiteOnly ? largestFinite : infinity;
        return sign | result;
    }
}
