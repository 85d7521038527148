package org.jccl.core.nccl;

import java.util.Map;

/** The first library version that has each optional function, for feature messages (DESIGN.md's version facts). */
final class LibraryVersions {
    /** Functions only RCCL has. */
    static final String RCCL_ONLY = "RCCL only (not in NCCL)";

    static final Map<String, String> FIRST_VERSIONS = Map.ofEntries(
            Map.entry("ncclCommFinalize", "NCCL 2.14.0"),
            Map.entry("ncclCommSplit", "NCCL 2.18.0"),
            Map.entry("ncclCommRegister", "NCCL 2.19.0"),
            Map.entry("ncclCommDeregister", "NCCL 2.19.0"),
            Map.entry("ncclMemAlloc", "NCCL 2.19.0"),
            Map.entry("ncclMemFree", "NCCL 2.19.0"),
            Map.entry("ncclGroupSimulateEnd", "NCCL 2.22.0"),
            Map.entry("ncclCommInitRankScalable", "NCCL 2.23.0"),
            Map.entry("ncclCommShrink", "NCCL 2.27.0"),
            Map.entry("ncclCommWindowRegister", "NCCL 2.27.0"),
            Map.entry("ncclCommWindowDeregister", "NCCL 2.27.0"),
            Map.entry("ncclDevCommCreate", "NCCL 2.28.0"),
            Map.entry("ncclDevCommDestroy", "NCCL 2.28.0"),
            Map.entry("ncclAlltoAll", "NCCL 2.28.0"),
            Map.entry("ncclGather", "NCCL 2.28.0"),
            Map.entry("ncclScatter", "NCCL 2.28.0"),
            Map.entry("ncclCommQueryProperties", "NCCL 2.29.0"),
            Map.entry("ncclCommGrow", "NCCL 2.29.0"),
            Map.entry("ncclCommGetUniqueId", "NCCL 2.29.0"),
            Map.entry("ncclCommSuspend", "NCCL 2.29.0"),
            Map.entry("ncclPutSignal", "NCCL 2.29.2"),
            Map.entry("ncclSignal", "NCCL 2.29.2"),
            Map.entry("ncclWaitSignal", "NCCL 2.29.2"),
            Map.entry("ncclAllToAllv", RCCL_ONLY),
            Map.entry("ncclAllReduceWithBias", RCCL_ONLY),
            Map.entry("ncclCommResume", RCCL_ONLY),
            Map.entry("ncclCommMemStats", RCCL_ONLY));

    private LibraryVersions() {
    }

    /** {@code NCCL_VERSION_CODE} to text: 22809 → {@code 2.28.9}; codes before 2.9 used {@code X*1000+Y*100+Z}. */
    static String format(int code) {
        if (code <= 0) return "unknown";
        if (code < 10000) return (code / 1000) + "." + (code % 1000 / 100) + "." + (code % 100);
        return (code / 10000) + "." + (code % 10000 / 100) + "." + (code % 100);
    }
}
