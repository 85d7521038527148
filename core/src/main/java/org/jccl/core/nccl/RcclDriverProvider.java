package org.jccl.core.nccl;

import org.jccl.core.BackendKind;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverProvider;

/** Opens the RCCL backend: the NCCL driver over {@code jccl.rccl.library} and the HIP runtime {@code jccl.hip.runtime}. */
public final class RcclDriverProvider implements DriverProvider {
    /** For {@link java.util.ServiceLoader}. */
    public RcclDriverProvider() {
    }

    @Override
    public BackendKind kind() {
        return BackendKind.RCCL;
    }

    @Override
    public Driver open() {
        return NcclDriver.open(BackendKind.RCCL);
    }
}
