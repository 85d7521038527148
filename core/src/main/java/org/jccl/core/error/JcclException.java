package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/**
 * Root of every exception jccl throws. Unchecked, like the rest of the Reactor world.
 *
 * <p>Carries what a user needs to act on a failure: the library's result code ({@code ncclResult_t}, or the
 * GPU runtime's error code for {@link GpuRuntimeException}), the library's own error string, the text of
 * {@code ncclGetLastError}, and the description of the {@code Work} that failed, if any. The message
 * starts with the communicator and the work, e.g.
 * {@code [comm=3f2a rank=1/2] allReduce(seq=17, count=1048576, float32, sum): ...}.
 */
public class JcclException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String reason;
    private final int resultCode;
    private final @Nullable String libraryMessage;
    private final @Nullable String lastError;
    private final @Nullable String work;

    public JcclException(String message) {
        this(message, -1, null, null, null, null);
    }

    public JcclException(String message, @Nullable Throwable cause) {
        this(message, -1, null, null, null, cause);
    }

    /**
     * @param message        what happened, in the caller's terms
     * @param resultCode     the library's result code, or -1 when the failure did not come from a library
     * @param libraryMessage the library's error string for the code, if known
     * @param lastError      the library's last-error text, if any
     * @param work           the description of the failed work, if the failure belongs to one
     * @param cause          the underlying cause, if any
     */
    public JcclException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
                         @Nullable String work, @Nullable Throwable cause) {
        super(compose(message, resultCode, libraryMessage, lastError, work), cause);
        this.reason = message;
        this.resultCode = resultCode;
        this.libraryMessage = libraryMessage;
        this.lastError = lastError;
        this.work = work;
    }

    private static String compose(String message, int code, @Nullable String libraryMessage, @Nullable String lastError,
                                  @Nullable String work) {
        StringBuilder sb = new StringBuilder();
        if (work != null) sb.append(work).append(": ");
        sb.append(message);
        if (code >= 0) sb.append(" (code ").append(code);
        if (libraryMessage != null && !libraryMessage.isEmpty()) sb.append(code >= 0 ? ", " : " (").append(libraryMessage);
        if (code >= 0 || (libraryMessage != null && !libraryMessage.isEmpty())) sb.append(')');
        if (lastError != null && !lastError.isEmpty()) sb.append(" — last error: ").append(lastError);
        return sb.toString();
    }

    /** What happened, without the work description and library texts that {@link #getMessage()} adds. */
    public String reason() {
        return reason;
    }

    /** The library's result code ({@code ncclResult_t} or runtime error), or -1 if none. */
    public int resultCode() {
        return resultCode;
    }

    /** The library's error string for {@link #resultCode()}, if known. */
    public @Nullable String libraryMessage() {
        return libraryMessage;
    }

    /** The library's {@code ncclGetLastError} text at the time of failure, if any. */
    public @Nullable String lastError() {
        return lastError;
    }

    /** The description of the work that failed, if the failure belongs to one. */
    public @Nullable String work() {
        return work;
    }
}
