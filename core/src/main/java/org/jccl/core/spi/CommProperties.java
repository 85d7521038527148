package org.jccl.core.spi;

/**
 * {@code ncclCommProperties_t} (NCCL 2.29+) as the library reported it for one communicator.
 *
 * @param rank               the communicator rank
 * @param size               its number of ranks
 * @param cudaDevice         its CUDA device
 * @param nvmlDevice         the same device's NVML index
 * @param deviceApiSupport   whether device communicators can be created
 * @param multimemSupport    whether NVLink multicast (multimem) is available
 * @param ginType            the GPU-initiated networking type: 0 none, 2 proxy, 3 GDAKI
 * @param lsaTeamCount       the number of load/store-accessible teams ({@code nLsaTeams})
 * @param hostRmaSupport     whether host-initiated one-sided operations are supported
 * @param railedGinType      the GIN type across rails, coded as {@code ginType}
 */
public record CommProperties(int rank, int size, int cudaDevice, int nvmlDevice, boolean deviceApiSupport,
                             boolean multimemSupport, int ginType, int lsaTeamCount, boolean hostRmaSupport,
                             int railedGinType) {
}
