package org.jccl.core.rendezvous;

/** Which process hosts the rendezvous server of a job. */
public enum StoreHost {
    /** Rank 0 starts the server on the configured bind address and port, then joins it like every rank. */
    RANK0,
    /** Another process (the {@code Launcher}, a service) runs the server; every rank only connects. */
    EXTERNAL
}
