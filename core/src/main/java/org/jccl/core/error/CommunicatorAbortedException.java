package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** The communicator was aborted (by the user, a timeout policy, or its first async error); every pending and later work fails with this. */
public class CommunicatorAbortedException extends JcclException {
    private static final long serialVersionUID = 1L;

    public CommunicatorAbortedException(String message) {
        super(message, -1, null, null, null, null);
    }

    public CommunicatorAbortedException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
