package org.jccl.core.spi;

/**
 * NCCL's device API for a communicator, a capability a driver offers or not ({@link DriverComm#capability}):
 * properties, and device communicators that kernels take by value. Called by the {@code device-api} module on the
 * communicator's launch thread. Where the loaded library lacks a function the call throws
 * {@link org.jccl.core.error.UnsupportedFeatureException} naming it.
 */
public interface DeviceCommSupport {
    /** {@code ncclCommQueryProperties} (NCCL 2.29+): what the communicator supports. */
    CommProperties queryProperties();

    /**
     * {@code ncclDevCommCreate}, collective: a device communicator meeting {@code requirements}. Inside a group its
     * fields are written at the group's end, so the handle is read only after the issuing work completed.
     */
    DevCommHandle devCommCreate(DevCommRequirements requirements);

    /** {@code ncclDevCommDestroy}, collective; no kernel using it may still run. Does not free the handle. */
    void devCommDestroy(DevCommHandle devComm);
}
