package org.jccl.core.host;

/**
 * The small floating-point formats of jccl ({@code float16}, {@code bfloat16}, OCP FP8 E4M3 and E5M2): exact
 * decoding to {@code double} and IEEE 754 round-to-nearest-even encoding from {@code double}, subnormals included.
 *
 * <p>Out-of-range results: {@code float16} and {@code bfloat16} follow IEEE 754 (overflow gives ±infinity, as
 * CUDA's {@code __float2half_rn}). The FP8 formats follow CUDA's {@code __NV_SATFINITE} conversion, which NCCL's
 * fp8 reductions use when they convert each result back: a NaN stays NaN (the canonical pattern {@code 0x7F}; every
 * format encodes NaN as its one positive canonical pattern), any finite value beyond the largest finite one and ±infinity become ±max finite (448 for
 * E4M3, 57344 for E5M2). E5M2 infinities can therefore be read but a conversion never produces one.
 */
final class MiniFloat {
    static final MiniFloat FLOAT16 = new MiniFloat(5, 10, true, false, 0x7E00);
    static final MiniFloat BFLOAT16 = new MiniFloat(8, 7, true, false, 0x7FC0);
    static final MiniFloat E4M3 = new MiniFloat(4, 3, false, true, 0x7F);
    static final MiniFloat E5M2 = new MiniFloat(5, 2, true, true, 0x7F);

    private final int mantissaBits;
    private final int bias;
    private final int exponentMask;
    private final int signBit;
    private final boolean infinities;
    private final boolean saturating;
    private final int canonicalNaN;
    private final int minExponent;
    private final double maxFinite;
    private final int maxFiniteBits;
    private final double[] decoded;

    private MiniFloat(int exponentBits, int mantissaBits, boolean infinities, boolean saturating, int canonicalNaN) {
        this.mantissaBits = mantissaBits;
        this.bias = (1 << (exponentBits - 1)) - 1;
        this.exponentMask = (1 << exponentBits) - 1;
        this.signBit = 1 << (exponentBits + mantissaBits);
        this.infinities = infinities;
        this.saturating = saturating;
        this.canonicalNaN = canonicalNaN;
        this.minExponent = 1 - bias;
        // E4M3 spends only the all-ones mantissa of the top exponent on NaN; IEEE-like formats the whole exponent.
        this.maxFiniteBits = infinities
                ? ((exponentMask - 1) << mantissaBits) | ((1 << mantissaBits) - 1)
                : (exponentMask << mantissaBits) | ((1 << mantissaBits) - 2);
        this.decoded = new double[signBit << 1];
        for (int bits = 0; bits < decoded.length; bits++) decoded[bits] = slowDecode(bits);
        this.maxFinite = decoded[maxFiniteBits];
    }

    /** The largest finite value. */
    double maxFinite() {
        return maxFinite;
    }

    /** The exact value of a bit pattern (only the format's low bits are read). */
    double decode(int bits) {
        return decoded[bits & (decoded.length - 1)];
    }

    private double slowDecode(int bits) {
        boolean negative = (bits & signBit) != 0;
        int exponent = (bits >>> mantissaBits) & exponentMask;
        int mantissa = bits & ((1 << mantissaBits) - 1);
        double magnitude;
        if (infinities && exponent == exponentMask) {
            magnitude = mantissa == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else if (!infinities && exponent == exponentMask && mantissa == (1 << mantissaBits) - 1) {
            magnitude = Double.NaN;
        } else if (exponent == 0) {
            magnitude = Math.scalb((double) mantissa, minExponent - mantissaBits);
        } else {
            magnitude = Math.scalb((double) ((1 << mantissaBits) | mantissa), exponent - bias - mantissaBits);
        }
        return negative ? -magnitude : magnitude;
    }

    /** {@code value} rounded to this format (round to nearest, ties to even), as a bit pattern. */
    int encode(double value) {
        int sign = (Double.doubleToRawLongBits(value) < 0) ? signBit : 0;
        if (Double.isNaN(value)) return canonicalNaN; // one positive NaN, whatever the input's sign or payload
        double magnitude = Math.abs(value);
        if (magnitude == 0) return sign;
        if (Double.isInfinite(magnitude)) return overflow(sign);
        int exponent = Math.max(Math.getExponent(magnitude), minExponent);
        // Scaling by a power of two is exact; rint rounds half to even.
        double units = Math.rint(Math.scalb(magnitude, mantissaBits - exponent));
        double rounded = Math.scalb(units, exponent - mantissaBits);
        if (rounded > maxFinite) return overflow(sign);
        if (rounded < Math.scalb(1.0, minExponent)) return sign | (int) units; // subnormal (or zero)
        int e = Math.getExponent(rounded);
        int mantissa = (int) Math.scalb(rounded, mantissaBits - e) - (1 << mantissaBits);
        return sign | ((e + bias) << mantissaBits) | mantissa;
    }

    /** {@code value} rounded to this format, as the exact value of the result. */
    double round(double value) {
        return decode(encode(value));
    }

    private int overflow(int sign) {
        if (saturating || !infinities) return sign | maxFiniteBits;
        return sign | (exponentMask << mantissaBits);
    }
}
