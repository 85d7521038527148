package org.jccl.core.host;

import org.jccl.core.BackendKind;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverProvider;

/** Opens the host backend; always available (pure Java). */
public final class HostDriverProvider implements DriverProvider {
    /** Made by {@link java.util.ServiceLoader}. */
    public HostDriverProvider() {
    }

    @Override
    public BackendKind kind() {
        return BackendKind.HOST;
    }

    @Override
    public Driver open() {
        return new HostDriver();
    }
}
