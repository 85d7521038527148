package org.jccl.core.host;

import org.jccl.core.error.Errors;

/**
 * An operation could not complete because its clique was poisoned, a peer it needs closed the communicator, or it
 * found the ranks disagreeing.
 */
final class CliqueFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int resultCode;

    CliqueFailedException(String message, int resultCode) {
        super(message, null, false, false);
        this.resultCode = resultCode;
    }

    static CliqueFailedException poisoned(String reason, int code) {
        return new CliqueFailedException("the communicator's clique failed: " + reason, code);
    }

    /**
     * {@code peer} closed its communicator, so what this rank waits for from it never comes: a remote error, as
     * when a peer aborts, not a usage error of this rank.
     *
     * @param consequence what this rank was doing, e.g. {@code this rank's allReduce needs it}
     */
    static CliqueFailedException departed(int peer, String consequence) {
        return new CliqueFailedException("rank " + peer + " closed the communicator: " + consequence, Errors.REMOTE_ERROR);
    }

    /** The typed jccl exception for callers outside a stream task. */
    org.jccl.core.error.JcclException asJccl() {
        return Errors.fromResult("host communicator", resultCode, getMessage(), getMessage(), null);
    }

    /** The {@code ncclResult_t} the rank reports as its async error. */
    int resultCode() {
        return resultCode;
    }
}
