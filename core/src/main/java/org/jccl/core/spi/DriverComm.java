package org.jccl.core.spi;

import org.jccl.core.CommConfig;
import org.jccl.core.CommMemoryStats;
import org.jccl.core.DataType;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jspecify.annotations.Nullable;

/**
 * A backend's communicator ({@code ncclComm_t} or a host rank). Every method is called from the owning
 * communicator's launch thread, except {@link #asyncError()} (event thread), {@link #abort()} (an abort thread) and
 * {@link #waitingFor()} (whichever thread reports a timeout), which may be called from any thread.
 */
public interface DriverComm {
    int rank();

    int size();

    /** The device the communicator runs on; {@link DriverConstants#HOST_DEVICE} for host ranks. */
    int device();

    /**
     * {@code ncclCommGetAsyncError}: a {@code ncclResult_t}; {@code ncclInProgress} while a non-blocking creation or
     * operation is still under way. Cheap; polled by the event thread.
     */
    int asyncError();

    /**
     * What this rank's unfinished work is blocked on, where the driver can tell — e.g. a signal wait and the signals
     * it still lacks, a collective set-up call and the ranks that have not made it — in words for the timeout error
     * and its log line; null where it cannot tell (the engine then names the usual cause, ranks issuing different
     * operations). Must not block; called from any thread.
     */
    default @Nullable String waitingFor() {
        return null;
    }

    /**
     * Whether {@link #asyncError()} may be called while this communicator's launch thread is inside another call of
     * the library. NCCL's waits for a non-blocking communicator's in-flight group job (e.g. a first collective
     * connecting to a peer), which would stall the event thread; such communicators say false and are polled between
     * launches only. Asked once, when the engine takes the communicator.
     */
    default boolean asyncErrorSafeDuringLaunch() {
        return true;
    }

    /** {@code ncclGetLastError}'s text for this communicator, or null. */
    @Nullable String lastError();

    /** {@code ncclCommFinalize}: flushes outstanding work; may return before done on non-blocking communicators. */
    void finalizeComm();

    /** {@code ncclCommDestroy}: frees the communicator; pending work must have completed. */
    void destroy();

    /** {@code ncclCommAbort}: stops pending work and frees the communicator; may take long, never called twice. */
    void abort();

    /**
     * {@code ncclCommSplit}; {@code color} {@link DriverConstants#SPLIT_NO_COLOR} takes part without joining and
     * returns null.
     */
    @Nullable DriverComm split(int color, int key, CommConfig config);

    /** {@code ncclCommShrink} ({@code NCCL_SHRINK_DEFAULT}): a new communicator without {@code excludedRanks}. */
    DriverComm shrink(int[] excludedRanks, CommConfig config);

    /**
     * The library's handle of this communicator ({@code ncclComm_t}) for modules that call functions core does not
     * wrap; 0 for backends without one (host).
     */
    default long nativeHandle() {
        return 0;
    }

    /** {@code ncclCommRegister}: returns the registration handle. */
    long register(MemoryBlock block, long offset, long bytes);

    /** {@code ncclCommDeregister}. */
    void deregister(long handle);

    /**
     * {@code ncclRedOpCreatePreMulSum} with a host scalar ({@code deviceScalar == null}) or a scalar in device
     * memory; returns the new {@code ncclRedOp_t} code.
     */
    int createPreMulSum(double hostScalar, @Nullable MemoryBlock deviceScalar, long deviceScalarOffset, DataType type);

    /** {@code ncclRedOpDestroy}. */
    void destroyReduceOp(int code);

    /** {@code NCCL_SUSPEND_MEM}: {@link #suspend} releases the communicator's dynamic GPU memory. */
    int SUSPEND_MEMORY = 0x01;

    /**
     * {@code ncclCommSuspend}: frees resources; the communicator cannot be used until {@link #resume()}.
     *
     * @throws UnsupportedFeatureException if the backend's library lacks it
     */
    default void suspend(int flags) {
        throw unsupported("ncclCommSuspend");
    }

    /** {@code ncclCommResume}: restores what {@link #suspend} released. */
    default void resume() {
        throw unsupported("ncclCommResume");
    }

    /** {@code ncclCommMemStats}: the communicator's tracked GPU memory. */
    default CommMemoryStats memStats() {
        throw unsupported("ncclCommMemStats");
    }

    /** {@code ncclCommRevoke}: stops in-flight operations so that destroy, split or shrink can proceed. */
    default void revoke(int flags) {
        throw unsupported("ncclCommRevoke");
    }

    /** {@code ncclCommGetUniqueId}: the id new ranks use to join this communicator by {@link #grow}. */
    default byte[] growUniqueId() {
        throw unsupported("ncclCommGetUniqueId");
    }

    /**
     * {@code ncclCommGrow} as an existing rank: a new communicator of {@code newSize} ranks; the rank that made the
     * id passes it ({@code uniqueId}), the others pass null.
     */
    default DriverComm grow(int newSize, byte @Nullable [] uniqueId, CommConfig config) {
        throw unsupported("ncclCommGrow");
    }

    /**
     * This communicator as {@code type}, a capability the driver may offer for modules ({@link OneSidedComm},
     * {@link DeviceCommSupport}), or null where it does not.
     */
    default <T> @Nullable T capability(Class<T> type) {
        return type.isInstance(this) ? type.cast(this) : null;
    }

    private UnsupportedFeatureException unsupported(String function) {
        return new UnsupportedFeatureException(function, getClass().getSimpleName(), "n/a", null);
    }
}
