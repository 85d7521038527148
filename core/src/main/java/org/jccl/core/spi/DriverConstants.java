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
    /** {@code NCCL_WIN_DEFAULT}: a window peers reach through the library's default path. */
    public static final int WIN_DEFAULT = 0x00;
    /** {@code NCCL_WIN_COLL_SYMMETRIC} (NCCL 2.27+): registered by every rank with one size; symmetric kernels and puts use it. */
    public static final int WIN_COLL_SYMMETRIC = 0x01;
    /** {@code NCCL_WIN_STRICT_ORDERING} (NCCL 2.29.7+): operations on the window complete in issue order. */
    public static final int WIN_STRICT_ORDERING = 0x02;
    /** {@code NCCL_WIN_REQUIRED_ALIGNMENT}: a window starts this many bytes (or a multiple) into its allocation. */
    public static final long WIN_REQUIRED_ALIGNMENT = 4096;

    private DriverConstants() {
    }
}
