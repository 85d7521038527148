package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** The operating system failed a call the library made ({@code ncclSystemError}). */
public class SystemErrorException extends JcclException {
    private static final long serialVersionUID = 1L;

    public SystemErrorException(String message) {
        super(message, -1, null, null, null, null);
    }

    public SystemErrorException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
