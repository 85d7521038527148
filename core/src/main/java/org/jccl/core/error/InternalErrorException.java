package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** The library hit an internal error ({@code ncclInternalError}). */
public class InternalErrorException extends JcclException {
    private static final long serialVersionUID = 1L;

    public InternalErrorException(String message) {
        super(message, -1, null, null, null, null);
    }

    public InternalErrorException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
