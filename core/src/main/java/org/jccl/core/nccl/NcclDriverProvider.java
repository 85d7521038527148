package org.jccl.core.nccl;

import org.jccl.core.BackendKind;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverProvider;

/** Opens the NCCL backend: {@code jccl.nccl.library} and {@code jccl.cuda.runtime} (defaults {@code libnccl.so.2}, {@code libcudart.so.13}/{@code .12}). */
public final class NcclDriverProvider implements DriverProvider {
    /** For {@link java.util.ServiceLoader}. */
    public NcclDriverProvider() {
    }

    @Override
    public BackendKind kind() {
        return BackendKind.NCCL;
    }

    @Override
    public Driver open() {
        return NcclDriver.open(BackendKind.NCCL);
    }
}
