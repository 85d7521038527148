package org.jccl.rma.kv;

/** Why a KV request ended without its data: the kind of a {@link KvTransferException}. */
public enum KvFailure {
    /** Its deadline passed before every layer was usable on the receiver. */
    DEADLINE,
    /** The sending application cancelled it. */
    CANCELLED_BY_SENDER,
    /** The receiving application cancelled it. */
    CANCELLED_BY_RECEIVER,
    /** The receiver refused it (a layout or request it cannot take). */
    REFUSED,
    /** A copy, put, send or receive of one of its layers failed. */
    TRANSFER_FAILED,
    /** The link to the peer was lost (the peer process died, closed, or stopped answering). */
    PEER_LOST,
    /** The sender or receiver was closed, or its communicator closed or aborted. */
    CLOSED
}
