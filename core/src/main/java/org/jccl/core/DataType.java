package org.jccl.core;

/**
 * Element types of every operation. The codes are {@code ncclDataType_t}'s (NCCL 2.24+), which RCCL shares.
 */
public enum DataType {
    INT8(0, 1, "int8"),
    UINT8(1, 1, "uint8"),
    INT32(2, 4, "int32"),
    UINT32(3, 4, "uint32"),
    INT64(4, 8, "int64"),
    UINT64(5, 8, "uint64"),
    FLOAT16(6, 2, "float16"),
    FLOAT32(7, 4, "float32"),
    FLOAT64(8, 8, "float64"),
    BFLOAT16(9, 2, "bfloat16"),
    /** OCP FP8 E4M3 (no infinities, saturating finite range ±448, one NaN pattern per sign). */
    FLOAT8_E4M3(10, 1, "float8e4m3"),
    /** OCP FP8 E5M2 (IEEE-like: infinities and NaNs). */
    FLOAT8_E5M2(11, 1, "float8e5m2");

    private final int code;
    private final int size;
    private final String label;

    DataType(int code, int size, String label) {
        this.code = code;
        this.size = size;
        this.label = label;
    }

    /** The {@code ncclDataType_t} value. */
    public int code() {
        return code;
    }

    /** Bytes per element. */
    public int size() {
        return size;
    }

    /** Whether this is a floating-point type (reductions round; {@code avg} divides exactly). */
    public boolean isFloatingPoint() {
        return this == FLOAT16 || this == FLOAT32 || this == FLOAT64 || this == BFLOAT16
                || this == FLOAT8_E4M3 || this == FLOAT8_E5M2;
    }

    /** Whether this is one of the two 8-bit float formats. */
    public boolean isFloat8() {
        return this == FLOAT8_E4M3 || this == FLOAT8_E5M2;
    }

    /** Whether integer values are unsigned (matters for max/min and avg). */
    public boolean isUnsigned() {
        return this == UINT8 || this == UINT32 || this == UINT64;
    }

    @Override
    public String toString() {
        return label;
    }
}
