package org.jccl.core.spi;

/**
 * A device communicator ({@code ncclDevComm}) in native memory owned by this handle. Its fields are valid once the
 * call that created it has taken effect — after its group ended, so after the work that issued it completed.
 */
public interface DevCommHandle {
    /** The structure's bytes, as a kernel receives it by value. */
    byte[] bytes();

    int rank();

    int size();

    /** This rank's index in its load/store-accessible (LSA) team. */
    int lsaRank();

    /** The LSA team's size. */
    int lsaSize();

    /** GIN contexts the communicator got (the requirement is a hint). */
    int ginContextCount();

    int ginSignalCount();

    int ginCounterCount();

    /** Frees the native memory; after {@link DeviceCommSupport#devCommDestroy}, or when creation failed. */
    void free();
}
