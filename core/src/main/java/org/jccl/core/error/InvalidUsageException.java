package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** The library was used in a way it does not allow ({@code ncclInvalidUsage}), or an object was used after close. */
public class InvalidUsageException extends JcclException {
    private static final long serialVersionUID = 1L;

    public InvalidUsageException(String message) {
        super(message, -1, null, null, null, null);
    }

    public InvalidUsageException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
