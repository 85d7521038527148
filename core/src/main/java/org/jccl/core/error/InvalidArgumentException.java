package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** A call's arguments were rejected (by jccl before anything was enqueued, or by the library's {@code ncclInvalidArgument}). Nothing was changed. */
public class InvalidArgumentException extends JcclException {
    private static final long serialVersionUID = 1L;

    public InvalidArgumentException(String message) {
        super(message, -1, null, null, null, null);
    }

    public InvalidArgumentException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
