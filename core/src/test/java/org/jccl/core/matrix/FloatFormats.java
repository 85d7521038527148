package org.jccl.core.matrix;

import java.util.Arrays;
import org.jccl.core.DataType;

/**
 * An independent oracle for the small float formats, written the obvious way: it enumerates every bit pattern,
 * and rounds by searching the sorted finite values for the nearest one (ties to the even pattern). Slow, simple,
 * and shares no code with the backend's converter, so tests can compare the two.
 */
public final class FloatFormats {
    private static final FloatFormats FLOAT16 = new FloatFormats(5, 10, true, false, 0x7E00);
    private static final FloatFormats BFLOAT16 = new FloatFormats(8, 7, true, false, 0x7FC0);
    private static final FloatFormats E4M3 = new FloatFormats(4, 3, false, true, 0x7F);
    private static final FloatFormats E5M2 = new FloatFormats(5, 2, true, true, 0x7F);

    private final int exponentBits;
    private final int mantissaBits;
    private final boolean infinities;
    private final boolean saturating;
    private final int canonicalNaN;
    private final int signBit;
    private final double[] sortedValues;
    private final int[] sortedBits;

    private FloatFormats(int exponentBits, int mantissaBits, boolean infinities, boolean saturating, int canonicalNaN) {
        this.exponentBits = exponentBits;
        this.mantissaBits = mantissaBits;
        this.infinities = infinities;
        this.saturating = saturating;
        this.canonicalNaN = canonicalNaN;
        this.signBit = 1 << (exponentBits + mantissaBits);
        int count = 0;
        double[] values = new double[signBit];
        int[] bits = new int[signBit];
        for (int b = 0; b < signBit; b++) {
            double v = decode(b);
            if (Double.isFinite(v)) {
                values[count] = v;
                bits[count] = b;
                count++;
            }
        }
        // Patterns of the positive half increase with their value, so the arrays are already sorted.
        sortedValues = Arrays.copyOf(values, count);
        sortedBits = Arrays.copyOf(bits, count);
    }

    /** The oracle for {@code type}, which must be one of the small float types. */
    public static FloatFormats of(DataType type) {
        return switch (type) {
            case FLOAT16 -> FLOAT16;
            case BFLOAT16 -> BFLOAT16;
            case FLOAT8_E4M3 -> E4M3;
            case FLOAT8_E5M2 -> E5M2;
            default -> throw new IllegalArgumentException(type + " is not a small float type");
        };
    }

    /** The value of a pattern, from the format's definition. */
    public double decode(int pattern) {
        int bits = pattern & (2 * signBit - 1);
        int exponentMask = (1 << exponentBits) - 1;
        int bias = (1 << (exponentBits - 1)) - 1;
        int e = (bits >> mantissaBits) & exponentMask;
        int m = bits & ((1 << mantissaBits) - 1);
        double sign = (bits & signBit) != 0 ? -1 : 1;
        if (infinities && e == exponentMask) return m == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        if (!infinities && e == exponentMask && m == (1 << mantissaBits) - 1) return Double.NaN;
        if (e == 0) return sign * m * Math.pow(2, 1 - bias - mantissaBits);
        return sign * (1 + m / Math.pow(2, mantissaBits)) * Math.pow(2, e - bias);
    }

    /** The largest finite value. */
    public double max() {
        return sortedValues[sortedValues.length - 1];
    }

    /** The pattern nearest to {@code v} (ties to even), with the format's overflow rule. */
    public int encode(double v) {
        if (Double.isNaN(v)) return canonicalNaN;
        int sign = (v < 0 || (v == 0 && 1 / v < 0)) ? signBit : 0;
        double a = Math.abs(v);
        double max = max();
        double topUlp = max - sortedValues[sortedValues.length - 2];
        if (a > max) {
            if (saturating || !infinities) return sign | sortedBits[sortedBits.length - 1];
            if (a >= max + topUlp / 2) return sign | (((1 << exponentBits) - 1) << mantissaBits);
            return sign | sortedBits[sortedBits.length - 1];
        }
        int i = Arrays.binarySearch(sortedValues, a);
        if (i >= 0) return sign | sortedBits[i];
        int above = -i - 1;
        int below = above - 1;
        double dBelow = a - sortedValues[below];
        double dAbove = sortedValues[above] - a;
        int chosen;
        if (dBelow < dAbove) chosen = below;
        else if (dAbove < dBelow) chosen = above;
        else chosen = (sortedBits[below] & 1) == 0 ? below : above;
        return sign | sortedBits[chosen];
    }

    /** {@code v} rounded to the format, as a value. */
    public double round(double v) {
        return decode(encode(v));
    }
}
