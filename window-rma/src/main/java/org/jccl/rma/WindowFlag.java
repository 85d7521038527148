package org.jccl.rma;

import org.jccl.core.spi.DriverConstants;

/** The flags a window is registered with ({@code NCCL_WIN_*}); none means {@code NCCL_WIN_DEFAULT}. */
public enum WindowFlag {
    /**
     * {@code NCCL_WIN_COLL_SYMMETRIC}: every rank registers a buffer of the same size. NCCL's puts need their local
     * buffer inside such a window, and it lets symmetric kernels and the device API reach peers' memory.
     */
    COLL_SYMMETRIC(DriverConstants.WIN_COLL_SYMMETRIC, "NCCL 2.27.3"),
    /** {@code NCCL_WIN_STRICT_ORDERING}: operations on the window take effect in issue order. */
    STRICT_ORDERING(DriverConstants.WIN_STRICT_ORDERING, "NCCL 2.29.7");

    private final int code;
    private final String firstVersion;

    WindowFlag(int code, String firstVersion) {
        this.code = code;
        this.firstVersion = firstVersion;
    }

    /** The library's bit. */
    public int code() {
        return code;
    }

    /** The first library version that knows the flag. */
    public String firstVersion() {
        return firstVersion;
    }
}
