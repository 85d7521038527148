package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jccl.core.DataType;
import org.junit.jupiter.api.Test;

/** Host scalars in each element type's bit pattern, checked against the formats' known values. */
class ScalarEncodingTest {
    @Test
    void half() {
        assertEquals(0x3c00, ScalarEncoding.minifloat(1.0, 5, 10, false));
        assertEquals(0xc000, ScalarEncoding.minifloat(-2.0, 5, 10, false));
        assertEquals(0x7bff, ScalarEncoding.minifloat(65504, 5, 10, false));
        assertEquals(0x7c00, ScalarEncoding.minifloat(65520, 5, 10, false), "rounds up to infinity");
        assertEquals(0x0001, ScalarEncoding.minifloat(Math.scalb(1.0, -24), 5, 10, false), "smallest subnormal");
        assertEquals(0x3555, ScalarEncoding.minifloat(1.0 / 3, 5, 10, false));
        assertEquals(0x7e00, ScalarEncoding.minifloat(Double.NaN, 5, 10, false));
    }

    @Test
    void bfloat16() {
        assertEquals(0x3f80, ScalarEncoding.minifloat(1.0, 8, 7, false));
        assertEquals(0x3eab, ScalarEncoding.minifloat(1.0 / 3, 8, 7, false));
        assertEquals(0xff80, ScalarEncoding.minifloat(Double.NEGATIVE_INFINITY, 8, 7, false));
    }

    @Test
    void fp8() {
        assertEquals(0x38, ScalarEncoding.minifloat(1.0, 4, 3, true), "e4m3 1.0");
        assertEquals(0x7e, ScalarEncoding.minifloat(448, 4, 3, true), "e4m3 max");
        assertEquals(0x7e, ScalarEncoding.minifloat(1e6, 4, 3, true), "e4m3 saturates");
        assertEquals(0x7f, ScalarEncoding.minifloat(Double.NaN, 4, 3, true));
        assertEquals(0x01, ScalarEncoding.minifloat(Math.scalb(1.0, -9), 4, 3, true), "e4m3 smallest subnormal");
        assertEquals(0x3c, ScalarEncoding.minifloat(1.0, 5, 2, false), "e5m2 1.0");
        assertEquals(0x7b, ScalarEncoding.minifloat(57344, 5, 2, false), "e5m2 max");
        assertEquals(0xfc, ScalarEncoding.minifloat(-1e9, 5, 2, false), "e5m2 -inf");
    }

    @Test
    void integersAndWideFloatsAreLittleEndian() {
        assertArrayEquals(new byte[] {(byte) 0xfe}, ScalarEncoding.encode(-2.7, DataType.INT8));
        assertArrayEquals(new byte[] {7, 0, 0, 0, 0, 0, 0, 0}, ScalarEncoding.encode(7.9, DataType.UINT64));
        assertArrayEquals(new byte[] {0, 0, (byte) 0x80, 0x3f}, ScalarEncoding.encode(1.0, DataType.FLOAT32));
        assertArrayEquals(new byte[] {0, 0x3c}, ScalarEncoding.encode(1.0, DataType.FLOAT16));
    }
}
