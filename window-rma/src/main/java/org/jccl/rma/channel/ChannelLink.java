package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.core.Modules;
import org.jccl.core.Work;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;

/**
 * One rank's side of a channel: its window, its pinned host staging and the operations the protocol issues, all on
 * the communicator's stream in issue order and without a timeout (a slow peer is not an error; a dead one fails
 * the communicator).
 */
final class ChannelLink {
    final ChannelLayout layout;
    final OneSided rma;
    final Window window;
    /** Pinned host memory in two areas of one 64-byte record per slot: headers, and closing records read back. */
    final Buffer pinned;
    private final ModuleContext context;
    private final MemoryRef windowRef;
    private final MemoryRef pinnedRef;

    ChannelLink(ChannelLayout layout, OneSided rma, Window window, Buffer pinned) {
        this.layout = layout;
        this.rma = rma;
        this.window = window;
        this.pinned = pinned;
        this.context = Modules.context(rma.communicator());
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
        Buffer source = window.buffer().slice(from, bytes);
        return rma.putSignalOperation(window, source, bytes, DataType.UINT8, peer, to, 0, 0);
    }

    StreamOperation signal(int peer) {
        return rma.signalOperation(peer, 0, 0);
    }

    StreamOperation await(int peer, int count) {
        return rma.waitSignalOperation(SignalWait.of(peer, count));
    }

    /** {@code times} signals to {@code peer}, as one work. */
    Work signals(int peer, int times) {
        StreamOperation one = signal(peer);
        StreamOperation[] all = new StreamOperation[times];
        Arrays.fill(all, one);
        return run(all);
    }

    /**
     * Issues {@code ops} as one work, enqueued back to back on the stream (one completion event for all: the channel's
     * steps are small, and an event per step would cost more than the step). The work holds the window's and the
     * pinned memory, so closing the channel never frees them under a pending copy.
     */
    Work run(StreamOperation... ops) {
        StringBuilder what = new StringBuilder("channel(");
        for (int i = 0; i < ops.length; i++) what.append(i == 0 ? "" : ", ").append(ops[i].what());
        StreamOperation steps = StreamOperation.sequence(what.append(')').toString(), ops);
        List<Buffer> uses = new ArrayList<>(List.of(window.buffer(), pinned));
        uses.addAll(steps.uses());
        return context.issue(new StreamOperation(steps.what(), uses, steps.task()), Duration.ZERO);
    }
}
