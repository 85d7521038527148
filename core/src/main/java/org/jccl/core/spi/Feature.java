package org.jccl.core.spi;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The optional functions of NCCL/RCCL that jccl uses, each with the first released NCCL version that declares it (read
 * from NVIDIA's public release tags): the one source of the feature checks, the "first version" in
 * {@link org.jccl.core.error.UnsupportedFeatureException} and the table of library functions in
 * {@code docs/guides/backends.md}, which a test keeps equal to this list. Functions every supported version has are not features.
 */
public enum Feature {
    COMM_FINALIZE("NCCL 2.14.3", "ncclCommFinalize"),
    COMM_SPLIT("NCCL 2.18.1", "ncclCommSplit"),
    COMM_REGISTER("NCCL 2.19.1", "ncclCommRegister"),
    COMM_DEREGISTER("NCCL 2.19.1", "ncclCommDeregister"),
    MEM_ALLOC("NCCL 2.19.1", "ncclMemAlloc"),
    MEM_FREE("NCCL 2.19.1", "ncclMemFree"),
    RED_OP_CREATE_PRE_MUL_SUM("NCCL 2.11.4", "ncclRedOpCreatePreMulSum"),
    GROUP_SIMULATE_END("NCCL 2.22.3", "ncclGroupSimulateEnd"),
    COMM_INIT_RANK_SCALABLE("NCCL 2.23.4", "ncclCommInitRankScalable"),
    COMM_SHRINK("NCCL 2.27.3", "ncclCommShrink"),
    COMM_WINDOW_REGISTER("NCCL 2.27.3", "ncclCommWindowRegister"),
    COMM_WINDOW_DEREGISTER("NCCL 2.27.3", "ncclCommWindowDeregister"),
    DEV_COMM_CREATE("NCCL 2.28.3", "ncclDevCommCreate"),
    DEV_COMM_DESTROY("NCCL 2.28.3", "ncclDevCommDestroy"),
    /** NCCL 2.28 names it {@code ncclAlltoAll}; older RCCL {@code ncclAllToAll}: either serves. */
    ALL_TO_ALL("NCCL 2.28.3", "ncclAlltoAll", "ncclAllToAll"),
    GATHER("NCCL 2.28.3", "ncclGather"),
    SCATTER("NCCL 2.28.3", "ncclScatter"),
    COMM_QUERY_PROPERTIES("NCCL 2.29.2", "ncclCommQueryProperties"),
    COMM_GROW("NCCL 2.29.2", "ncclCommGrow"),
    COMM_GET_UNIQUE_ID("NCCL 2.29.2", "ncclCommGetUniqueId"),
    COMM_SUSPEND("NCCL 2.29.7", "ncclCommSuspend"),
    COMM_RESUME("NCCL 2.29.7", "ncclCommResume"),
    COMM_MEM_STATS("NCCL 2.29.7", "ncclCommMemStats"),
    COMM_REVOKE("NCCL 2.28.7", "ncclCommRevoke"),
    PUT_SIGNAL("NCCL 2.29.2", "ncclPutSignal"),
    SIGNAL("NCCL 2.29.2", "ncclSignal"),
    WAIT_SIGNAL("NCCL 2.29.2", "ncclWaitSignal"),
    WIN_GET_USER_PTR("NCCL 2.29.2", "ncclWinGetUserPtr"),
    /** RCCL 2.29 names it {@code ncclAlltoAllv}; {@code ncclAllToAllv}, deprecated there, serves older RCCL. */
    ALL_TO_ALL_V(Feature.RCCL_ONLY, "ncclAlltoAllv", "ncclAllToAllv"),
    ALL_REDUCE_WITH_BIAS(Feature.RCCL_ONLY, "ncclAllReduceWithBias");

    /** The "first version" of functions that only RCCL has. */
    public static final String RCCL_ONLY = "RCCL only (not in NCCL)";

    private final String firstVersion;
    private final List<String> functions;

    Feature(String firstVersion, String... functions) {
        this.firstVersion = firstVersion;
        this.functions = List.of(functions);
    }

    /** The library function, e.g. {@code ncclCommShrink} (the current NCCL name where it has several). */
    public String function() {
        return functions.get(0);
    }

    /** Every name the libraries export it under; any one present provides the feature. */
    public List<String> functions() {
        return functions;
    }

    /** The first version that has it, e.g. {@code NCCL 2.27.3}, or {@link #RCCL_ONLY}. */
    public String firstVersion() {
        return firstVersion;
    }

    /** The feature a library function provides, or null if it is none of these. */
    public static @Nullable Feature ofFunction(String function) {
        for (Feature f : values()) if (f.functions.contains(function)) return f;
        return null;
    }
}
