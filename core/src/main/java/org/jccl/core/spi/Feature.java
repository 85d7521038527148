package org.jccl.core.spi;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The optional functions of NCCL/RCCL that jccl uses, each with the first version that has it: the one source of
 * the feature checks, the "first version" in {@link org.jccl.core.error.UnsupportedFeatureException} and the README's
 * version table. Functions every supported version has are not features.
 */
public enum Feature {
    COMM_FINALIZE("NCCL 2.14.0", "ncclCommFinalize"),
    COMM_SPLIT("NCCL 2.18.0", "ncclCommSplit"),
    COMM_REGISTER("NCCL 2.19.0", "ncclCommRegister"),
    COMM_DEREGISTER("NCCL 2.19.0", "ncclCommDeregister"),
    MEM_ALLOC("NCCL 2.19.0", "ncclMemAlloc"),
    MEM_FREE("NCCL 2.19.0", "ncclMemFree"),
    RED_OP_CREATE_PRE_MUL_SUM("NCCL 2.11.0", "ncclRedOpCreatePreMulSum"),
    GROUP_SIMULATE_END("NCCL 2.22.0", "ncclGroupSimulateEnd"),
    COMM_INIT_RANK_SCALABLE("NCCL 2.23.0", "ncclCommInitRankScalable"),
    COMM_SHRINK("NCCL 2.27.0", "ncclCommShrink"),
    COMM_WINDOW_REGISTER("NCCL 2.27.0", "ncclCommWindowRegister"),
    COMM_WINDOW_DEREGISTER("NCCL 2.27.0", "ncclCommWindowDeregister"),
    DEV_COMM_CREATE("NCCL 2.28.0", "ncclDevCommCreate"),
    DEV_COMM_DESTROY("NCCL 2.28.0", "ncclDevCommDestroy"),
    /** NCCL 2.28 names it {@code ncclAlltoAll}; older RCCL {@code ncclAllToAll}: either serves. */
    ALL_TO_ALL("NCCL 2.28.0", "ncclAlltoAll", "ncclAllToAll"),
    GATHER("NCCL 2.28.0", "ncclGather"),
    SCATTER("NCCL 2.28.0", "ncclScatter"),
    COMM_QUERY_PROPERTIES("NCCL 2.29.0", "ncclCommQueryProperties"),
    COMM_GROW("NCCL 2.29.0", "ncclCommGrow"),
    COMM_GET_UNIQUE_ID("NCCL 2.29.0", "ncclCommGetUniqueId"),
    COMM_SUSPEND("NCCL 2.29.0", "ncclCommSuspend"),
    COMM_RESUME(Feature.RCCL_ONLY, "ncclCommResume"),
    COMM_MEM_STATS(Feature.RCCL_ONLY, "ncclCommMemStats"),
    COMM_REVOKE(null, "ncclCommRevoke"),
    PUT_SIGNAL("NCCL 2.29.2", "ncclPutSignal"),
    SIGNAL("NCCL 2.29.2", "ncclSignal"),
    WAIT_SIGNAL("NCCL 2.29.2", "ncclWaitSignal"),
    WIN_GET_USER_PTR("NCCL 2.29.2", "ncclWinGetUserPtr"),
    ALL_TO_ALL_V(Feature.RCCL_ONLY, "ncclAllToAllv"),
    ALL_REDUCE_WITH_BIAS(Feature.RCCL_ONLY, "ncclAllReduceWithBias");

    /** The "first version" of functions that only RCCL has. */
    public static final String RCCL_ONLY = "RCCL only (not in NCCL)";

    private final @Nullable String firstVersion;
    private final List<String> functions;

    Feature(@Nullable String firstVersion, String... functions) {
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

    /** The first version that has it, e.g. {@code NCCL 2.27.0}, or {@link #RCCL_ONLY}; null if not known. */
    public @Nullable String firstVersion() {
        return firstVersion;
    }

    /** The feature a library function provides, or null if it is none of these. */
    public static @Nullable Feature ofFunction(String function) {
        for (Feature f : values()) if (f.functions.contains(function)) return f;
        return null;
    }
}
