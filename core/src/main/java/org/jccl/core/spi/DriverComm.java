package org.jccl.core.spi;

import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jspecify.annotations.Nullable;

/**
 * A backend's communicator ({@code ncclComm_t} or a host rank). Every method is called from the owning
 * communicator's launch thread, except {@link #asyncError()} (event thread) and {@link #abort()} (an abort thread),
 * which the libraries allow from any thread.
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

    /** {@code ncclCommShrink}: a new communicator without {@code excludedRanks}. */
    DriverComm shrink(int[] excludedRanks, CommConfig config, boolean abortOnError);

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
}
