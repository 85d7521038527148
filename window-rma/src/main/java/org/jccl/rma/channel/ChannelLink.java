package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.core.Modules;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.spi.WaitDescriptor;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;

/**
 * One rank's side of a channel: its window, its pinned host staging and the operations the protocol issues, all on
 * the communicator's stream in issue order and without a timeout (a slow peer is not an error; a dead one fails
 * the communicator).
 *
 * <p>The puts, signals and waits are made here from the driver's one-sided capability rather than through
 * {@link OneSided}'s checked calls: every argument is the channel's own (its window, open until the channel has
 * settled; its slots; its lane), checked once when the channel opened. A check that failed later — once an abort
 * closed the communicator's windows — would throw from a completion callback and lose the step; here a step that
 * cannot be issued fails the future {@link #run} returns, which the sides handle like any failed step.
 */
final class ChannelLink {
    final ChannelLayout layout;
    final OneSided rma;
    final Window window;
    /** Pinned host memory in two areas of one 64-byte record per slot: headers, and closing records read back. */
    final Buffer pinned;
    /** The channel's own (signal index, context) between its two ranks: see {@link ChannelLanes}. */
    final ChannelLanes.Lane lane;
    private final ModuleContext context;
    private final OneSidedComm oneSided;
    private final MemoryRef windowRef;
    private final MemoryRef pinnedRef;

    ChannelLink(ChannelLayout layout, OneSided rma, Window window, Buffer pinned, ChannelLanes.Lane lane) {
        this.layout = layout;
        this.rma = rma;
        this.window = window;
        this.pinned = pinned;
        this.lane = lane;
        this.context = Modules.context(rma.communicator());
        this.oneSided = context.capability(OneSidedComm.class);
        this.windowRef = context.memory(window.buffer());
        this.pinnedRef = context.memory(pinned);
    }

    static final int HEADERS = 0;
    static final int RECORDS = 1;

    /** The pinned record {@code index} of {@code area}, as a little view of its own. */
    ByteBuffer host(int area, long index) {
        ByteBuffer b = pinnedRef.block().hostView();
        if (b == null) throw new IllegalStateException("pinned memory without a host view");
        return b.position((int) pinned(area, index)).slice().order(b.order());
    }

    /** Copies {@code bytes} from pinned record {@code index} of {@code area} into the window at {@code windowOffset}. */
    StreamOperation toWindow(int area, long index, long windowOffset, long bytes) {
        long from = pinned(area, index);
        return new StreamOperation("stage(" + bytes + " bytes)", List.of(), stream -> context.driver().copyAsync(
                windowRef.block(), windowRef.offset() + windowOffset, pinnedRef.block(), from, bytes, stream));
    }

    /** Copies {@code bytes} of the window at {@code windowOffset} into pinned record {@code index} of {@code area}. */
    StreamOperation fromWindow(long windowOffset, int area, long index, long bytes) {
        long to = pinned(area, index);
        return new StreamOperation("read(" + bytes + " bytes)", List.of(), stream -> context.driver().copyAsync(
                pinnedRef.block(), to, windowRef.block(), windowRef.offset() + windowOffset, bytes, stream));
    }

    private long pinned(int area, long index) {
        return pinnedRef.offset() + ((long) area * layout.slots() + index % layout.slots()) * ChannelLayout.HEADER;
    }

    static long pinnedBytes(ChannelLayout layout) {
        return 2L * layout.slots() * ChannelLayout.HEADER;
    }

    /** Copies a producer's block into its slot's data, after the header. */
    StreamOperation copyIn(Buffer block, long sequence) {
        MemoryRef src = context.memory(block);
        long at = windowRef.offset() + layout.slotOffset(sequence) + ChannelLayout.HEADER;
        long bytes = block.byteSize();
        return new StreamOperation("copy(" + bytes + " bytes)", List.of(block),
                stream -> context.driver().copyAsync(windowRef.block(), at, src.block(), src.offset(), bytes, stream));
    }

    /** Puts {@code bytes} of this rank's window at {@code from} into {@code peer}'s at {@code to}, and signals. */
    StreamOperation put(long from, long to, long bytes, int peer) {
        MemoryRef source = new MemoryRef(windowRef.block(), windowRef.offset() + from);
        long handle = window.handle();
        int signal = lane.signalIndex();
        int ctx = lane.context();
        return new StreamOperation("putSignal(" + bytes + " bytes, peer=" + peer + ")", List.of(),
                stream -> oneSided.putSignal(source, bytes, DataType.UINT8, peer, handle, to, signal, ctx, stream));
    }

    StreamOperation signal(int peer) {
        int signal = lane.signalIndex();
        int ctx = lane.context();
        return new StreamOperation("signal(peer=" + peer + ")", List.of(), stream -> oneSided.signal(peer, signal, ctx, stream));
    }

    StreamOperation await(int peer, long count) {
        WaitDescriptor[] wait = {new WaitDescriptor(Math.toIntExact(count), peer, lane.signalIndex(), lane.context())};
        return new StreamOperation("waitSignal(" + count + " from " + peer + ")", List.of(),
                stream -> oneSided.waitSignal(wait, stream));
    }

    /** {@code times} signals to {@code peer}, as one work. */
    CompletableFuture<Void> signals(int peer, int times) {
        StreamOperation one = signal(peer);
        StreamOperation[] all = new StreamOperation[times];
        Arrays.fill(all, one);
        return run(all);
    }

    /**
     * Issues {@code ops} as one work, enqueued back to back on the stream (one completion event for all: the channel's
     * steps are small, and an event per step would cost more than the step). The work holds the window's and the
     * pinned memory, so closing the channel never frees them under a pending copy. A work the communicator refuses
     * (closed, aborted) is a failed future, never a throw: the sides call this from completion callbacks.
     */
    CompletableFuture<Void> run(StreamOperation... ops) {
        StringBuilder what = new StringBuilder("channel(");
        for (int i = 0; i < ops.length; i++) what.append(i == 0 ? "" : ", ").append(ops[i].what());
        StreamOperation steps = StreamOperation.sequence(what.append(')').toString(), ops);
        List<Buffer> uses = new ArrayList<>(List.of(window.buffer(), pinned));
        uses.addAll(steps.uses());
        try {
            return context.issue(new StreamOperation(steps.what(), uses, steps.task()), Duration.ZERO);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
