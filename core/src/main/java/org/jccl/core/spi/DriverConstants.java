package org.jccl.core.spi;

/** Values shared by every driver. */
public final class DriverConstants {
    /** The device number of host memory and of the host backend's ranks. */
    public static final int HOST_DEVICE = -1;
    /** {@code NCCL_SPLIT_NOCOLOR}: the rank takes part in a split but joins no new communicator. */
    public static final int SPLIT_NO_COLOR = -1;
    /** Event status reported by {@link Driver#pollEvents}: the event has completed. */
    public static final int EVENT_DONE = 0;
    /** Event status reported by {@link Driver#pollEvents}: the event has not completed yet. */
    public static final int EVENT_PENDING = 1;

    private DriverConstants() {
    }
}
