package org.jccl.device.kernels;

import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.device.DeviceApi;
import org.jccl.device.DeviceComm;
import org.jccl.device.Kernel;
import org.jccl.device.KernelArgs;
import org.jccl.device.LaunchConfig;
import org.jccl.rma.Window;

/**
 * An all-to-all for small messages done by one kernel over load/store access: every rank writes its block for each
 * peer straight into that peer's receive window over NVLink, between two LSA barriers — no proxy, no protocol, one
 * launch. For ranks of one LSA team (one NVLink domain); the library's {@code ncclAlltoAll} covers the rest.
 *
 * <pre>{@code
 * LsaAllToAll a2a = LsaAllToAll.of(devComm);              // devComm with lsaBarrierCount >= blocks()
 * a2a.run(sendWin, 0, recvWin, 0, blockBytes);             // every rank; completes when its blocks arrived
 * }</pre>
 */
public final class LsaAllToAll {
    /** Threads per block: enough 16-byte lanes to saturate a link from a few blocks. */
    static final int THREADS = 512;

    private final DeviceComm devComm;
    private final Kernel kernel;
    private final int blocks;

    private LsaAllToAll(DeviceComm devComm, Kernel kernel, int blocks) {
        this.devComm = devComm;
        this.kernel = kernel;
        this.blocks = blocks;
    }

    /**
     * The all-to-all of {@code devComm}'s ranks, one block per LSA barrier it has (at most 32).
     *
     * @throws InvalidArgumentException if its ranks are not one LSA team or it has no LSA barrier
     */
    public static LsaAllToAll of(DeviceComm devComm) {
        Errors.requireArgument(devComm, "devComm");
        if (devComm.lsaSize() != devComm.size()) {
            throw new InvalidArgumentException("an LSA all-to-all needs every rank in one LSA team: " + devComm);
        }
        int barriers = devComm.requirements().values().lsaBarrierCount();
        if (barriers < 1) throw new InvalidArgumentException("an LSA all-to-all needs lsaBarrierCount >= 1: " + devComm);
        return new LsaAllToAll(devComm, ShippedKernels.kernel(devComm.communicator(), "jccl_lsa_all_to_all"), Math.min(barriers, 32));
    }

    /** How many blocks each launch runs. */
    public int blocks() {
        return blocks;
    }

    /**
     * Sends block p ({@code blockBytes} at {@code sendOffset + p * blockBytes} of {@code send}) to rank p, receiving
     * rank r's block at {@code recvOffset + r * blockBytes} of {@code recv}; collective, every rank with the same sizes.
     *
     * @throws InvalidArgumentException for sizes or offsets not multiples of 16, or ranges past a window's end
     */
    public Work run(Window send, long sendOffset, Window recv, long recvOffset, long blockBytes) {
        Errors.requireArgument(send, "send");
        Errors.requireArgument(recv, "recv");
        if (blockBytes <= 0 || blockBytes % 16 != 0 || sendOffset % 16 != 0 || recvOffset % 16 != 0 || sendOffset < 0 || recvOffset < 0) {
            throw new InvalidArgumentException("block size and offsets must be non-negative multiples of 16 (block "
                    + blockBytes + ", offsets " + sendOffset + ", " + recvOffset + ")");
        }
        long span = Errors.exactProduct(blockBytes, devComm.size(), "all-to-all: block bytes × ranks");
        requireInside(send, sendOffset, span);
        requireInside(recv, recvOffset, span);
        return DeviceApi.of(devComm.communicator()).launch(kernel, LaunchConfig.of(blocks, THREADS),
                KernelArgs.create().window(send).int64(sendOffset).window(recv).int64(recvOffset).int64(blockBytes)
                        .deviceComm(devComm));
    }

    static void requireInside(Window window, long offset, long bytes) {
        if (Errors.exactSum(offset, bytes, "offset + bytes") > window.byteSize()) {
            throw new InvalidArgumentException(bytes + " bytes at " + offset + " run past the end of " + window);
        }
    }
}
