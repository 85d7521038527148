package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import org.jccl.core.error.Errors;
import org.jspecify.annotations.Nullable;

/**
 * One rank's side of one-sided operations across processes: puts and signals go out as RMA frames of at most
 * {@link Wire#CHUNK} bytes (the window in the description, the window offset in aux long, signal index and context in
 * aux double, the signal flag on the last frame); a peer's frames are applied on the network thread that receives
 * them, never the stream thread: the data into this rank's window, then its signal.
 */
final class RmaLane {
    private final NetworkClique clique;
    private final HostWindows windows;

    RmaLane(NetworkClique clique, HostWindows windows) {
        this.clique = clique;
        this.windows = windows;
    }

    HostWindows windows() {
        return windows;
    }

    /** Sends a put as RMA frames that refer to {@code source}; returns the last frame's write (null to itself). */
    @Nullable ChannelFuture put(int peer, long window, long offset, HostMemoryBlock source, long sourceOffset, long bytes,
                                int signal, int context) {
        ChannelFuture last = null;
        long done = 0;
        do {
            int len = (int) Math.min(Wire.CHUNK, bytes - done);
            boolean signals = done + len == bytes;
            last = send(peer, window, offset + done, source, sourceOffset + done, len, signals, signal, context);
            done += len;
        } while (done < bytes);
        return last;
    }

    /** A signal without data. */
    void signal(int peer, int signal, int context) {
        send(peer, 0, 0, null, 0, 0, true, signal, context);
    }

    private @Nullable ChannelFuture send(int peer, long window, long offset, @Nullable HostMemoryBlock source,
                                         long sourceOffset, int len, boolean signals, int signal, int context) {
        ByteBuf frame = Frames.data(Wire.LANE_RMA, signals ? Wire.FLAG_SIGNAL : 0, (int) window, len,
                signal * 65536.0 + context, offset, source, sourceOffset, len, peer == clique.rank());
        return clique.dispatch(peer, Wire.LANE_RMA, frame);
    }

    /** Applies a peer's RMA frame, on the network thread. */
    void land(int peer, ByteBuf frame) {
        try {
            int len = frame.readableBytes() - Wire.DATA_HEADER;
            if (len > 0) {
                windows.write(frame.getInt(Wire.AT_DESC), frame.getLong(Wire.AT_AUX_LONG), len,
                        dst -> frame.getBytes(Wire.DATA_HEADER, dst));
            }
            if ((frame.getByte(Wire.AT_FLAGS) & Wire.FLAG_SIGNAL) != 0) {
                int code = (int) frame.getDouble(Wire.AT_AUX_DOUBLE);
                windows.count(peer, code >>> 16, code & 0xffff);
            }
        } catch (RuntimeException e) {
            clique.poison("rank " + peer + "'s put does not fit rank " + clique.rank() + "'s windows: " + e.getMessage(),
                    Errors.INVALID_USAGE, true);
        }
    }
}
