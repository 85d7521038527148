package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/**
 * The one place that turns library result codes into exceptions, so every backend maps them alike.
 * Codes are {@code ncclResult_t} values, which NCCL, RCCL and the host backend share.
 */
public final class Errors {
    /** {@code ncclSuccess}. */
    public static final int SUCCESS = 0;
    /** {@code ncclUnhandledCudaError}. */
    public static final int UNHANDLED_CUDA_ERROR = 1;
    /** {@code ncclSystemError}. */
    public static final int SYSTEM_ERROR = 2;
    /** {@code ncclInternalError}. */
    public static final int INTERNAL_ERROR = 3;
    /** {@code ncclInvalidArgument}. */
    public static final int INVALID_ARGUMENT = 4;
    /** {@code ncclInvalidUsage}. */
    public static final int INVALID_USAGE = 5;
    /** {@code ncclRemoteError}. */
    public static final int REMOTE_ERROR = 6;
    /** {@code ncclInProgress}: a non-blocking call has not finished yet; not an error. */
    public static final int IN_PROGRESS = 7;

    private Errors() {
    }

    /** The name NCCL's headers give a result code. */
    public static String resultName(int code) {
        return switch (code) {
            case SUCCESS -> "ncclSuccess";
            case UNHANDLED_CUDA_ERROR -> "ncclUnhandledCudaError";
            case SYSTEM_ERROR -> "ncclSystemError";
            case INTERNAL_ERROR -> "ncclInternalError";
            case INVALID_ARGUMENT -> "ncclInvalidArgument";
            case INVALID_USAGE -> "ncclInvalidUsage";
            case REMOTE_ERROR -> "ncclRemoteError";
            case IN_PROGRESS -> "ncclInProgress";
            default -> "ncclResult(" + code + ")";
        };
    }

    /**
     * The typed exception for a failed library call.
     *
     * @param what           what was being done, e.g. {@code "ncclCommInitRank"}
     * @param code           the {@code ncclResult_t}; must not be {@link #SUCCESS} or {@link #IN_PROGRESS}
     * @param libraryMessage {@code ncclGetErrorString(code)}, if available
     * @param lastError      {@code ncclGetLastError(comm)}, if available
     * @param work           the work description, if the call belongs to one
     */
    public static JcclException fromResult(String what, int code, @Nullable String libraryMessage,
                                           @Nullable String lastError, @Nullable String work) {
        String message = what + " failed: " + resultName(code);
        return switch (code) {
            case UNHANDLED_CUDA_ERROR -> new GpuRuntimeException(message, code, libraryMessage, lastError, work, null);
            case SYSTEM_ERROR -> new SystemErrorException(message, code, libraryMessage, lastError, work, null);
            case INTERNAL_ERROR -> new InternalErrorException(message, code, libraryMessage, lastError, work, null);
            case INVALID_ARGUMENT -> new InvalidArgumentException(message, code, libraryMessage, lastError, work, null);
            case INVALID_USAGE -> new InvalidUsageException(message, code, libraryMessage, lastError, work, null);
            case REMOTE_ERROR -> new RemoteErrorException(message, code, libraryMessage, lastError, work, null);
            default -> new JcclException(message, code, libraryMessage, lastError, work, null);
        };
    }

    /** The typed exception for a failed CUDA/HIP runtime call. */
    public static GpuRuntimeException fromRuntime(String what, int code, @Nullable String runtimeMessage) {
        return new GpuRuntimeException(what + " failed", code, runtimeMessage, null, null, null);
    }

    /**
     * The same failure re-described for one work: keeps the type and codes, adds the work's description. Used when
     * one communicator-wide error (an async error, an abort, a launch failure) fails a work.
     */
    public static JcclException forWork(JcclException e, String work) {
        String m = e.reason();
        int c = e.resultCode();
        String lib = e.libraryMessage();
        String last = e.lastError();
        if (e instanceof CommunicatorAbortedException) return new CommunicatorAbortedException(m, c, lib, last, work, e);
        if (e instanceof RemoteErrorException) return new RemoteErrorException(m, c, lib, last, work, e);
        if (e instanceof WorkTimeoutException) return new WorkTimeoutException(m, c, lib, last, work, e);
        if (e instanceof InvalidArgumentException) return new InvalidArgumentException(m, c, lib, last, work, e);
        if (e instanceof InvalidUsageException) return new InvalidUsageException(m, c, lib, last, work, e);
        if (e instanceof SystemErrorException) return new SystemErrorException(m, c, lib, last, work, e);
        if (e instanceof InternalErrorException) return new InternalErrorException(m, c, lib, last, work, e);
        if (e instanceof GpuRuntimeException) return new GpuRuntimeException(m, c, lib, last, work, e);
        if (e instanceof UnsupportedFeatureException u) return u;
        return new JcclException(m, c, lib, last, work, e);
    }

    /**
     * The exception a failed future carried, without the {@code CompletionException}/{@code ExecutionException}
     * wrappers: a {@link RuntimeException} as it is, an {@link Error} rethrown, anything else wrapped in a
     * {@link JcclException}.
     */
    public static RuntimeException unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof java.util.concurrent.CompletionException || c instanceof java.util.concurrent.ExecutionException)
                && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof RuntimeException r) return r;
        if (c instanceof Error e) throw e;
        return new JcclException(c.toString(), c);
    }

    /**
     * {@code value}, or an {@link InvalidArgumentException} saying that {@code name} is missing: a null argument of the
     * public API is a bad argument like any other, and changes nothing.
     */
    public static <T> T requireArgument(@Nullable T value, String name) {
        if (value == null) throw new InvalidArgumentException(name + " must not be null");
        return value;
    }

    /**
     * {@code a × b} for size arithmetic on caller-supplied counts, offsets and rank counts, or an
     * {@link InvalidArgumentException} ("{@code what}: a × b overflows") where the product does not fit a long: a size
     * that wrapped would pass a capacity check it should fail. Pass a constant {@code what} on a per-operation path
     * (a concatenated one allocates on every call); {@code Validation} catches the overflow itself for that reason.
     */
    public static long exactProduct(long a, long b, String what) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw new InvalidArgumentException(what + ": " + a + " × " + b + " overflows");
        }
    }

    /** {@code a + b} for size arithmetic, or an {@link InvalidArgumentException} where the sum does not fit a long. */
    public static long exactSum(long a, long b, String what) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw new InvalidArgumentException(what + ": " + a + " + " + b + " overflows");
        }
    }
}
