package org.jccl.rma.kv;

/** How a KV transfer moves data; {@link #AUTO} chooses the fastest the two ranks share, and reports it. */
public enum KvPathKind {
    /** The fastest available: {@link #LSA_KERNEL}, else {@link #COPY} in one process, else {@link #PUT_SIGNAL}, else {@link #SEND_RECV}. */
    AUTO,
    /**
     * A device kernel gathers the source blocks and writes them straight into the peer's destination blocks over
     * NVLink load/store (NCCL's device API, 2.28+); needs the {@code device-api} module and both ranks in one LSA team.
     */
    LSA_KERNEL,
    /**
     * Ranks in one process: each segment copied straight into the peer's pool on the sender's stream (the host backend
     * in one JVM; GPUs of one process by peer copies). The per-block copy loop of benchmarks.
     */
    COPY,
    /** Pack into the sender's staging area, one {@code ncclPutSignal} into the receiver's, unpack there (NCCL 2.29.2+). */
    PUT_SIGNAL,
    /** Pack, {@code ncclSend}/{@code ncclRecv} between the staging areas, unpack: any NCCL or RCCL, and the host backend. */
    SEND_RECV
}
