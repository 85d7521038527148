package org.jccl.device;

import java.util.Optional;
import java.util.OptionalInt;
import org.jccl.core.spi.CommProperties;

/**
 * What a communicator supports for the device API. From {@code ncclCommQueryProperties} where the library has it
 * (NCCL 2.29+); otherwise only what is known without it — rank, size, device and whether the library has device
 * communicators at all — and every other field is empty: unknown, never guessed.
 *
 * @param rank               the communicator rank
 * @param size               its number of ranks
 * @param device             its CUDA device
 * @param libraryHasDeviceApi whether the loaded library has {@code ncclDevCommCreate} (NCCL 2.28+)
 * @param queried            whether the fields below came from the library
 * @param deviceApiSupport   whether this communicator can create device communicators
 * @param multimemSupport    whether NVLink multicast is available to it
 * @param ginType            its GPU-initiated networking
 * @param railedGinType      its GIN across rails
 * @param lsaTeamCount       how many load/store-accessible teams it spans
 * @param hostRmaSupport     whether host-initiated one-sided operations work on it
 */
public record DeviceProperties(int rank, int size, int device, boolean libraryHasDeviceApi, boolean queried,
                               Optional<Boolean> deviceApiSupport, Optional<Boolean> multimemSupport,
                               Optional<GinType> ginType, Optional<GinType> railedGinType, OptionalInt lsaTeamCount,
                               Optional<Boolean> hostRmaSupport) {
    static DeviceProperties queried(CommProperties p, boolean libraryHasDeviceApi) {
        return new DeviceProperties(p.rank(), p.size(), p.cudaDevice(), libraryHasDeviceApi, true,
                Optional.of(p.deviceApiSupport()), Optional.of(p.multimemSupport()), Optional.of(GinType.of(p.ginType())),
                Optional.of(GinType.of(p.railedGinType())), OptionalInt.of(p.lsaTeamCount()), Optional.of(p.hostRmaSupport()));
    }

    static DeviceProperties known(int rank, int size, int device, boolean libraryHasDeviceApi) {
        return new DeviceProperties(rank, size, device, libraryHasDeviceApi, false, Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), OptionalInt.empty(), Optional.empty());
    }
}
