package org.jccl.core.nccl;

import org.bytedeco.javacpp.LongPointer;
import org.jccl.core.DataType;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.core.spi.WaitDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * Windows and one-sided operations of one {@code ncclComm_t}: {@code ncclCommWindowRegister} …
 * {@code ncclWaitSignal}. The operations ({@code ncclPutSignal}, {@code ncclSignal}, {@code ncclWaitSignal}) trust
 * the module's checks, features included, and are handled as {@link NcclDriver#launch} handles collectives
 * (group-aware).
 */
final class NcclOneSided implements OneSidedComm {
    /** The first version that knows {@code NCCL_WIN_STRICT_ORDERING} (2.29.7). */
    private static final int STRICT_ORDERING_VERSION = 22907;
    /** The one-sided calls' {@code flags}: NCCL 2.29 accepts only 0. */
    private static final int NO_FLAGS = 0;

    private final NcclComm comm;
    private final NativeLibrary lib;
    /** Made on first use: the library's facts never change, and callers may ask before every one-sided call. */
    private @Nullable OneSidedLimits oneSidedLimits;

    NcclOneSided(NcclComm comm) {
        this.comm = comm;
        this.lib = comm.library();
    }

    /**
     * {@code ncclCommWindowRegister}. NCCL queues the registration as a group task that writes the window when the
     * group ends: on a non-blocking communicator that happens in the background after the call has returned
     * ncclSuccess. So the window goes to native memory kept until the communicator is no longer in progress, and a
     * registration inside an open group is refused (its window would be known only at the group's end).
     *
     * @throws UnsupportedFeatureException if the library lacks the function, or NCCL registered no window because the
     *                                     communicator has no symmetric-memory support
     */
    @Override
    public long windowRegister(MemoryBlock block, long offset, long bytes, int flags) {
        lib.features.require(Feature.COMM_WINDOW_REGISTER);
        if (offset < 0 || bytes <= 0 || offset + bytes > block.size()) {
            throw new InvalidArgumentException("windowRegister: range outside the block");
        }
        if (comm.driver().inGroup()) {
            throw new InvalidUsageException("ncclCommWindowRegister inside a group: the window would be known only at the group's end");
        }
        long window;
        try (LongPointer slot = new LongPointer(1)) {
            int code = NativeApi.jn_comm_window_register(lib.ctx, comm.handle(), block.address() + offset, bytes, flags, slot);
            if (comm.nonBlocking() && (code == Errors.SUCCESS || code == Errors.IN_PROGRESS)) {
                comm.awaitNotInProgress("ncclCommWindowRegister"); // success only says the registration was queued
            } else {
                comm.check(code, "ncclCommWindowRegister");
            }
            window = slot.get();
        }
        if (window == 0) throw noSymmetricMemory();
        return window;
    }

    /** NCCL answers ncclSuccess and a NULL window where the communicator has no symmetric-memory support. */
    private UnsupportedFeatureException noSymmetricMemory() {
        return new UnsupportedFeatureException("ncclCommWindowRegister", lib.ncclPath + " on this communicator, which has no"
                + " symmetric-memory support, so NCCL registered no window (it needs peer-to-peer access between all ranks,"
                + " cuMem allocations, NCCL_WIN_ENABLE not 0, and one NVLink domain or GPU-initiated networking)",
                lib.features.version(), null);
    }

    /** {@code ncclCommWindowDeregister}. */
    @Override
    public void windowDeregister(long window) {
        lib.features.require(Feature.COMM_WINDOW_DEREGISTER);
        comm.complete(NativeApi.jn_comm_window_deregister(lib.ctx, comm.handle(), window), "ncclCommWindowDeregister");
    }

    /** {@code ncclWinGetUserPtr}. */
    @Override
    public long windowUserPointer(long window) {
        lib.features.require(Feature.WIN_GET_USER_PTR);
        long[] out = new long[1];
        comm.check(NativeApi.jn_win_get_user_ptr(lib.ctx, comm.handle(), window, out), "ncclWinGetUserPtr");
        return out[0];
    }

    /**
     * What NCCL accepts, from its source: signal index 0 and context 0 only ({@code rmaTaskAppend}: "must be 0 for
     * now"), a put's source inside a collective-symmetric window, {@code NCCL_WIN_STRICT_ORDERING} from 2.29.7, windows
     * {@code NCCL_WIN_REQUIRED_ALIGNMENT} into cuMem memory ({@code ncclMemAlloc}).
     */
    @Override
    public OneSidedLimits oneSidedLimits() {
        lib.features.require(Feature.COMM_WINDOW_REGISTER);
        OneSidedLimits limits = oneSidedLimits;
        if (limits == null) {
            int flags = DriverConstants.WIN_COLL_SYMMETRIC
                    | (lib.version >= STRICT_ORDERING_VERSION ? DriverConstants.WIN_STRICT_ORDERING : 0);
            limits = new OneSidedLimits(1, 1, true, flags, DriverConstants.WIN_REQUIRED_ALIGNMENT, true);
            oneSidedLimits = limits;
        }
        return limits;
    }

    /** {@code ncclPutSignal}, handled as {@link NcclDriver#launch} handles operations (group-aware). */
    @Override
    public void putSignal(MemoryRef source, long count, DataType type, int peer, long window, long peerOffset,
                          int signalIndex, int context, DriverStream stream) {
        int code = NativeApi.jn_put_signal(lib.ctx, source.address(), count, type.code(), peer, window, peerOffset,
                signalIndex, context, NO_FLAGS, comm.handle(), stream.handle());
        comm.driver().finish(comm, code, "ncclPutSignal");
    }

    /** {@code ncclSignal}, handled as {@link NcclDriver#launch} handles operations (group-aware). */
    @Override
    public void signal(int peer, int signalIndex, int context, DriverStream stream) {
        int code = NativeApi.jn_signal(lib.ctx, peer, signalIndex, context, NO_FLAGS, comm.handle(), stream.handle());
        comm.driver().finish(comm, code, "ncclSignal");
    }

    /**
     * {@code ncclWaitSignal}: the descriptors go as one flat array in {@code ncclWaitSignalDesc_t}'s field order (count,
     * peer, signal index, context), which NCCL copies while enqueueing.
     */
    @Override
    public void waitSignal(WaitDescriptor[] waits, DriverStream stream) {
        int[] descriptors = new int[4 * waits.length];
        for (int i = 0; i < waits.length; i++) {
            WaitDescriptor w = waits[i];
            descriptors[4 * i] = w.count();
            descriptors[4 * i + 1] = w.peer();
            descriptors[4 * i + 2] = w.signalIndex();
            descriptors[4 * i + 3] = w.context();
        }
        int code = NativeApi.jn_wait_signal(lib.ctx, waits.length, descriptors, comm.handle(), stream.handle());
        comm.driver().finish(comm, code, "ncclWaitSignal");
    }
}
