package org.jccl.core.host;

import org.jccl.core.error.Errors;

/** An operation could not complete because its clique was poisoned, or it found the ranks disagreeing. */
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

    /** The typed jccl exception for callers outside a stream task. */
    org.jccl.core.error.JcclException asJccl() {
        return Errors.fromResult("host communicator", resultCode, getMessage(), getMessage(), null);
    }

    /** The {@code ncclResult_t} the rank reports as its async error. */
    int resultCode() {
        return resultCode;
    }
}
