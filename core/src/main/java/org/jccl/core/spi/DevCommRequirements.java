package org.jccl.core.spi;

/**
 * {@code ncclDevCommRequirements}: what a device communicator must provide. The last three fields exist from NCCL
 * 2.29; a driver refuses non-default values of them for an older library. Callers have checked every count is
 * non-negative.
 *
 * @param lsaMultimem           multimem (NVLink multicast) on the LSA team
 * @param barrierCount          world barriers
 * @param lsaBarrierCount       barriers across the LSA team
 * @param railGinBarrierCount   GIN barriers across the rail team
 * @param lsaLLA2ABlockCount    low-latency all-to-all blocks on the LSA team
 * @param lsaLLA2ASlotCount     low-latency all-to-all slots per block
 * @param ginForceEnable        set GIN up even where no requirement needs it
 * @param ginContextCount       a hint: the GIN contexts wanted ({@link #DEFAULT_GIN_CONTEXTS} by default)
 * @param ginSignalCount        GIN signals, numbered from 0
 * @param ginCounterCount       GIN counters, numbered from 0
 * @param ginConnectionType     0 none, 1 full, 2 rail (2.29+)
 * @param ginExclusiveContexts  contexts not shared with other device communicators (2.29+)
 * @param ginQueueDepth         GIN queue depth, 0 for the library's (2.29+)
 */
public record DevCommRequirements(boolean lsaMultimem, int barrierCount, int lsaBarrierCount, int railGinBarrierCount,
                                  int lsaLLA2ABlockCount, int lsaLLA2ASlotCount, boolean ginForceEnable,
                                  int ginContextCount, int ginSignalCount, int ginCounterCount, int ginConnectionType,
                                  boolean ginExclusiveContexts, int ginQueueDepth) {
    /** NCCL's default GIN context hint ({@code NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER}). */
    public static final int DEFAULT_GIN_CONTEXTS = 4;

    /** Whether a field NCCL 2.28 lacks is set to other than its default. */
    public boolean usesNccl229Fields() {
        return ginConnectionType != 0 || ginExclusiveContexts || ginQueueDepth != 0;
    }
}
