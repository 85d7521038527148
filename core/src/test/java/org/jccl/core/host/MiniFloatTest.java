package org.jccl.core.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.jccl.core.DataType;
import org.jccl.core.matrix.FloatFormats;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * Exhaustive checks of the small float conversions against the independent {@link FloatFormats} oracle: every bit
 * pattern decoded and round-tripped, every rounding tie between neighbours, overflow and saturation, subnormals.
 */
class MiniFloatTest {
    private static MiniFloat format(DataType t) {
        MiniFloat f = Reducer.mini(t);
        if (f == null) throw new IllegalArgumentException(t.toString());
        return f;
    }

    private static int patterns(DataType t) {
        return 1 << (8 * t.size());
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT16", "BFLOAT16", "FLOAT8_E4M3", "FLOAT8_E5M2"})
    void everyPatternDecodesAsDefinedAndRoundTrips(DataType t) {
        MiniFloat f = format(t);
        FloatFormats oracle = FloatFormats.of(t);
        int nans = 0;
        for (int p = 0; p < patterns(t); p++) {
            double v = f.decode(p);
            double expected = oracle.decode(p);
            if (Double.isNaN(expected)) {
                assertTrue(Double.isNaN(v), t + " pattern " + Integer.toHexString(p) + " must be NaN");
                assertTrue(Double.isNaN(f.decode(f.encode(v))), "NaN stays NaN");
                nans++;
                continue;
            }
            assertEquals(Double.doubleToLongBits(expected), Double.doubleToLongBits(v), t + " pattern " + Integer.toHexString(p));
            if (Double.isInfinite(v) && t == DataType.FLOAT8_E5M2) {
                // Satfinite: an E5M2 infinity converts to the largest finite value of its sign.
                assertEquals(v > 0 ? 0x7B : 0xFB, f.encode(v));
                continue;
            }
            assertEquals(p, f.encode(v), t + " pattern " + Integer.toHexString(p) + " round trip");
        }
        int expectedNaNs = switch (t) {
            case FLOAT8_E4M3 -> 2;
            case FLOAT8_E5M2 -> 6;
            case FLOAT16 -> 2 * 1023;
            default -> 2 * 127;
        };
        assertEquals(expectedNaNs, nans, t + " NaN patterns");
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT16", "BFLOAT16", "FLOAT8_E4M3", "FLOAT8_E5M2"})
    void tiesBetweenEveryPairOfNeighboursRoundToEven(DataType t) {
        MiniFloat f = format(t);
        FloatFormats oracle = FloatFormats.of(t);
        double max = oracle.max();
        int maxPattern = oracle.encode(max);
        for (int p = 0; p < maxPattern; p++) {
            double a = f.decode(p);
            double b = f.decode(p + 1);
            double mid = (a + b) / 2;
            int even = (p & 1) == 0 ? p : p + 1;
            assertEquals(even, f.encode(mid), t + " tie between " + a + " and " + b);
            assertEquals(p + 1, f.encode(Math.nextUp(mid)), t + " just above the tie");
            assertEquals(p, f.encode(Math.nextDown(mid)), t + " just below the tie");
            assertEquals(f.encode(-mid), even | (f.encode(-1.0) & ~f.encode(1.0)), t + " negative tie");
        }
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT16", "BFLOAT16", "FLOAT8_E4M3", "FLOAT8_E5M2"})
    void randomValuesRoundLikeTheOracle(DataType t) {
        MiniFloat f = format(t);
        FloatFormats oracle = FloatFormats.of(t);
        Random random = new Random(42);
        double max = oracle.max();
        for (int i = 0; i < 200_000; i++) {
            double v = switch (i % 3) {
                case 0 -> (random.nextDouble() * 2 - 1) * max * 1.1;
                case 1 -> (random.nextDouble() * 2 - 1) * Math.scalb(1.0, random.nextInt(40) - 30);
                default -> Double.longBitsToDouble(random.nextLong());
            };
            assertEquals(oracle.encode(v), f.encode(v), t + " rounding " + v);
        }
    }

    @Test
    void knownPatterns() {
        assertEquals(0x3C00, MiniFloat.FLOAT16.encode(1.0));
        assertEquals(0x3F80, MiniFloat.BFLOAT16.encode(1.0));
        assertEquals(0x38, MiniFloat.E4M3.encode(1.0));
        assertEquals(0x3C, MiniFloat.E5M2.encode(1.0));
        assertEquals(65504.0, MiniFloat.FLOAT16.maxFinite());
        assertEquals(448.0, MiniFloat.E4M3.maxFinite());
        assertEquals(57344.0, MiniFloat.E5M2.maxFinite());
        assertEquals(0x8000, MiniFloat.FLOAT16.encode(-0.0));
    }

    @Test
    void float16AndBfloat16OverflowToInfinityAsIeee() {
        assertEquals(0x7BFF, MiniFloat.FLOAT16.encode(65519.99));
        assertEquals(0x7C00, MiniFloat.FLOAT16.encode(65520.0)); // the tie above max rounds to even: infinity
        assertEquals(0xFC00, MiniFloat.FLOAT16.encode(Double.NEGATIVE_INFINITY));
        assertEquals(0x7F80, MiniFloat.BFLOAT16.encode(1e39));
        assertEquals(0x7E00, MiniFloat.FLOAT16.encode(Double.NaN));
        assertEquals(0x7FC0, MiniFloat.BFLOAT16.encode(-Double.NaN));
    }

    @Test
    void float8SaturatesToMaxFiniteAndKeepsNaN() {
        assertEquals(0x7E, MiniFloat.E4M3.encode(449.0));
        assertEquals(0x7E, MiniFloat.E4M3.encode(1e30));
        assertEquals(0x7E, MiniFloat.E4M3.encode(Double.POSITIVE_INFINITY));
        assertEquals(0xFE, MiniFloat.E4M3.encode(Double.NEGATIVE_INFINITY));
        assertEquals(0x7F, MiniFloat.E4M3.encode(Double.NaN));
        assertEquals(0x7B, MiniFloat.E5M2.encode(61440.0));
        assertEquals(0x7B, MiniFloat.E5M2.encode(Double.POSITIVE_INFINITY));
        assertEquals(0xFB, MiniFloat.E5M2.encode(-1e300));
        assertEquals(0x7F, MiniFloat.E5M2.encode(Double.NaN));
    }

    @Test
    void subnormalsRoundToNearestEven() {
        double tiny16 = Math.scalb(1.0, -24);
        assertEquals(0x0001, MiniFloat.FLOAT16.encode(tiny16));
        assertEquals(0x0000, MiniFloat.FLOAT16.encode(tiny16 / 2)); // tie: to even (zero)
        assertEquals(0x0001, MiniFloat.FLOAT16.encode(Math.nextUp(tiny16 / 2)));
        assertEquals(0x0002, MiniFloat.FLOAT16.encode(tiny16 * 1.5)); // tie between 1 and 2 units: to 2
        assertEquals(0x01, MiniFloat.E4M3.encode(Math.scalb(1.0, -9)));
        assertEquals(0x00, MiniFloat.E4M3.encode(Math.scalb(1.0, -10)));
        assertEquals(0x01, MiniFloat.E5M2.encode(Math.scalb(1.0, -16)));
        assertEquals(0x0001, MiniFloat.BFLOAT16.encode(Math.scalb(1.0, -133)));
        assertEquals(0x8000, MiniFloat.BFLOAT16.encode(-Math.scalb(1.0, -135)));
    }
}
