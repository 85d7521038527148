package org.jccl.core;

import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * DLPack's codes (dlpack.h 1.x) as jccl sees them: which {@code (code, bits, lanes)} is which {@link DataType}, and
 * which {@code DLDeviceType} each backend's memory has.
 */
final class DlpackTypes {
    static final int INT = 0;
    static final int UINT = 1;
    static final int FLOAT = 2;
    static final int BFLOAT = 4;
    static final int BOOL = 6;
    static final int FLOAT8_E4M3FN = 10;
    static final int FLOAT8_E5M2 = 12;

    static final int CPU = 1;
    static final int CUDA = 2;
    static final int CUDA_HOST = 3;
    static final int ROCM = 10;
    static final int ROCM_HOST = 11;
    static final int CUDA_MANAGED = 13;

    private DlpackTypes() {
    }

    /** The jccl type of a DLPack dtype; refused where no collective library has it. */
    static DataType dataType(int code, int bits, int lanes) {
        if (lanes != 1) throw new InvalidArgumentException("DLPack dtype with " + lanes + " lanes: only scalar elements (lanes 1) can be communicated");
        DataType t = switch (code) {
            case INT -> bits == 8 ? DataType.INT8 : bits == 32 ? DataType.INT32 : bits == 64 ? DataType.INT64 : null;
            case UINT -> bits == 8 ? DataType.UINT8 : bits == 32 ? DataType.UINT32 : bits == 64 ? DataType.UINT64 : null;
            case FLOAT -> bits == 16 ? DataType.FLOAT16 : bits == 32 ? DataType.FLOAT32 : bits == 64 ? DataType.FLOAT64 : null;
            case BFLOAT -> bits == 16 ? DataType.BFLOAT16 : null;
            case FLOAT8_E4M3FN -> bits == 8 ? DataType.FLOAT8_E4M3 : null;
            case FLOAT8_E5M2 -> bits == 8 ? DataType.FLOAT8_E5M2 : null;
            default -> null;
        };
        if (t != null) return t;
        String hint = code == BOOL ? " (view a bool tensor as uint8 to send it; reductions of bools need max or min)" : "";
        throw new InvalidArgumentException("DLPack dtype " + name(code) + bits + " has no NCCL data type: supported are"
                + " int8/32/64, uint8/32/64, float16/32/64, bfloat16, float8_e4m3fn and float8_e5m2" + hint);
    }

    /** The DLPack {@code (code, bits)} of a jccl type. */
    static int code(DataType type) {
        return switch (type) {
            case INT8, INT32, INT64 -> INT;
            case UINT8, UINT32, UINT64 -> UINT;
            case FLOAT16, FLOAT32, FLOAT64 -> FLOAT;
            case BFLOAT16 -> BFLOAT;
            case FLOAT8_E4M3 -> FLOAT8_E4M3FN;
            case FLOAT8_E5M2 -> FLOAT8_E5M2;
        };
    }

    /** The device type DLPack gives memory of {@code backend}: its devices, or the CPU for the host backend. */
    static int deviceType(BackendKind backend, boolean pinnedHost) {
        return switch (backend) {
            case NCCL -> pinnedHost ? CUDA_HOST : CUDA;
            case RCCL -> pinnedHost ? ROCM_HOST : ROCM;
            case HOST -> CPU;
        };
    }

    /** Whether {@code backend}'s operations can use memory of DLPack device type {@code deviceType}. */
    static boolean usableBy(BackendKind backend, int deviceType) {
        return switch (backend) {
            case NCCL -> deviceType == CUDA;
            case RCCL -> deviceType == ROCM;
            // The CPU can touch all of these: plain, pinned and managed memory.
            case HOST -> deviceType == CPU || deviceType == CUDA_HOST || deviceType == ROCM_HOST || deviceType == CUDA_MANAGED;
        };
    }

    static String deviceName(int deviceType) {
        String n = switch (deviceType) {
            case CPU -> "kDLCPU";
            case CUDA -> "kDLCUDA";
            case CUDA_HOST -> "kDLCUDAHost";
            case ROCM -> "kDLROCM";
            case ROCM_HOST -> "kDLROCMHost";
            case CUDA_MANAGED -> "kDLCUDAManaged";
            default -> null;
        };
        return n != null ? n : "device type " + deviceType;
    }

    private static String name(int code) {
        @Nullable String n = switch (code) {
            case INT -> "int";
            case UINT -> "uint";
            case FLOAT -> "float";
            case 3 -> "opaque handle ";
            case BFLOAT -> "bfloat";
            case 5 -> "complex";
            case BOOL -> "bool";
            default -> null;
        };
        return n != null ? n : "code " + code + " of ";
    }
}
