package org.jccl.core.rendezvous;

import org.jccl.core.error.JcclException;
import org.jspecify.annotations.Nullable;

/**
 * A rendezvous operation failed: the server refused it (see {@link #errorCode()}), its time ran out, or the
 * connection to the server was lost.
 */
public class RendezvousException extends JcclException {
    private static final long serialVersionUID = 1L;

    private final @Nullable ErrorCode errorCode;

    /** A failure the server reported with a code. */
    public RendezvousException(String message, @Nullable ErrorCode errorCode) {
        super(message);
        this.errorCode = errorCode;
    }

    /** A local failure (connection lost, interrupted, refused), with its cause. */
    public RendezvousException(String message, @Nullable Throwable cause) {
        super(message, cause);
        this.errorCode = null;
    }

    /** The server's reason, or null when the failure was local (e.g. the connection was lost). */
    public @Nullable ErrorCode errorCode() {
        return errorCode;
    }
}
