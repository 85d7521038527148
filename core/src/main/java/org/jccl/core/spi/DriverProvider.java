package org.jccl.core.spi;

import org.jccl.core.BackendKind;

/**
 * Opens a backend's driver. Found with {@link java.util.ServiceLoader}; core ships one per backend kind.
 */
public interface DriverProvider {
    BackendKind kind();

    /**
     * Loads the libraries and returns the driver.
     *
     * @throws org.jccl.core.error.LibraryUnavailableException if the libraries cannot be loaded; the message says
     *                                                         which files were tried and why
     */
    Driver open();
}
