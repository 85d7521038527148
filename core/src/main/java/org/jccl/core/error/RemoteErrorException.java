package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** A peer failed: a remote process died or its network connection broke ({@code ncclRemoteError}). */
public class RemoteErrorException extends JcclException {
    private static final long serialVersionUID = 1L;

    public RemoteErrorException(String message) {
        super(message, -1, null, null, null, null);
    }

    public RemoteErrorException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
