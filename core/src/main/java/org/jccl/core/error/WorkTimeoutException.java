package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** A {@code Work} did not complete within its timeout; the message names the pending work (sequence number, operation, count, type). */
public class WorkTimeoutException extends JcclException {
    private static final long serialVersionUID = 1L;

    public WorkTimeoutException(String message) {
        super(message, -1, null, null, null, null);
    }

    public WorkTimeoutException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
