package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** A backend's native library could not be loaded; the message says which files were tried and why they failed. */
public class LibraryUnavailableException extends JcclException {
    private static final long serialVersionUID = 1L;

    public LibraryUnavailableException(String message) {
        super(message, -1, null, null, null, null);
    }

    public LibraryUnavailableException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
