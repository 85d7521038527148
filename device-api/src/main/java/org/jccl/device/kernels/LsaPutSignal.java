package org.jccl.device.kernels;

import java.util.HashMap;
import java.util.Map;
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
 * Put with signal initiated by the GPU over load/store access: a kernel copies a range of this rank's window into an
 * LSA peer's window and then raises a signal word there; a waiting kernel on the peer holds its stream until the
 * signal arrives. The device-side counterpart of {@code ncclPutSignal}/{@code ncclWaitSignal}, for peers of one LSA
 * team, and usable with NCCL 2.28 where the host one-sided API does not exist yet.
 *
 * <p>A signal slot is 16 bytes of the window at a 16-aligned offset, zeroed before first use: the signal word the
 * peers' puts raise, then the count of arriving blocks of this rank's own puts. Signals count up: {@link #waitFor}
 * waits for the total of puts announced so far.
 */
public final class LsaPutSignal {
    /** Bytes of the window a signal slot takes. */
    public static final int SLOT_BYTES = 16;
    static final int THREADS = 512;

    private final DeviceComm devComm;
    private final Kernel put;
    private final Kernel wait;
    private final Map<Long, Long> expected = new HashMap<>();

    private LsaPutSignal(DeviceComm devComm) {
        this.devComm = devComm;
        this.put = ShippedKernels.kernel(devComm.communicator(), "jccl_lsa_put_signal");
        this.wait = ShippedKernels.kernel(devComm.communicator(), "jccl_lsa_wait_signal");
    }

    /** Puts and waits between {@code devComm}'s ranks. */
    public static LsaPutSignal of(DeviceComm devComm) {
        return new LsaPutSignal(Errors.requireArgument(devComm, "devComm"));
    }

    /**
     * Copies {@code bytes} from {@code srcOffset} of this rank's part of {@code window} to {@code dstOffset} of
     * {@code peer}'s (an LSA rank), then raises the signal of the slot at {@code slotOffset} there, with
     * {@code blocks} blocks of the grid sharing the copy. Completes when the put is done on this side.
     *
     * @throws InvalidArgumentException for sizes or offsets not multiples of 16, ranges past the window's end, a peer
     *                                  outside the LSA team or a block count outside 1..1024
     */
    public Work put(Window window, long srcOffset, int peer, long dstOffset, long bytes, long slotOffset, int blocks) {
        Errors.requireArgument(window, "window");
        if (peer < 0 || peer >= devComm.lsaSize()) {
            throw new InvalidArgumentException("peer " + peer + " is not an LSA rank of " + devComm);
        }
        if (blocks < 1 || blocks > 1024) throw new InvalidArgumentException("blocks must be 1..1024, not " + blocks);
        if (bytes <= 0 || bytes % 16 != 0 || srcOffset % 16 != 0 || dstOffset % 16 != 0 || srcOffset < 0 || dstOffset < 0) {
            throw new InvalidArgumentException("put size and offsets must be non-negative multiples of 16 (" + bytes
                    + " bytes, offsets " + srcOffset + ", " + dstOffset + ")");
        }
        requireSlot(window, slotOffset);
        LsaAllToAll.requireInside(window, srcOffset, bytes);
        LsaAllToAll.requireInside(window, dstOffset, bytes);
        return DeviceApi.of(devComm.communicator()).launch(put, LaunchConfig.of(blocks, THREADS), KernelArgs.create()
                .window(window).int64(srcOffset).int64(dstOffset).int64(bytes).int32(peer).int64(slotOffset));
    }

    /**
     * Holds this rank's stream until {@code puts} more puts have raised the slot's signal; the data they wrote is
     * visible to the work issued after it, and to the host once it completed. The wait occupies the stream: a put
     * this rank makes to itself must be issued before the wait for it.
     */
    public Work waitFor(Window window, long slotOffset, int puts) {
        Errors.requireArgument(window, "window");
        requireSlot(window, slotOffset);
        if (puts < 1) throw new InvalidArgumentException("wait for at least one put, not " + puts);
        synchronized (expected) { // the total counts only waits that were issued
            long target = expected.getOrDefault(slotOffset, 0L) + puts;
            Work w = DeviceApi.of(devComm.communicator()).launch(wait, LaunchConfig.of(1, 32),
                    KernelArgs.create().window(window).int64(slotOffset).int64(target));
            expected.put(slotOffset, target);
            return w;
        }
    }

    private static void requireSlot(Window window, long slotOffset) {
        if (slotOffset < 0 || slotOffset % SLOT_BYTES != 0) {
            throw new InvalidArgumentException("a signal slot starts at a multiple of 16 bytes, not " + slotOffset);
        }
        LsaAllToAll.requireInside(window, slotOffset, SLOT_BYTES);
    }
}
