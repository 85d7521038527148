package org.jccl.core.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.TooLongFrameException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The host network transport's frames: a 4-byte big-endian length, then a type byte and the body. Frames larger
 * than {@link #MAX_FRAME} are refused by the decoder (the connection, and the clique it belongs to, fail). Data
 * frames carry at most {@link #CHUNK} payload bytes, so a large message is a sequence of frames that the receiver
 * can reduce or forward one at a time (pipelining). On a connection this process accepted, frames are limited to
 * {@link #HANDSHAKE_MAX_FRAME} until the peer has presented the token ({@link #admit}), so a stranger cannot make a
 * root or a data port buffer more than that.
 */
final class Wire {
    /** Payload bytes per data frame; a multiple of every element size. */
    static final int CHUNK = 1 << 20;
    /** Bytes of a data frame before its payload: type, lane, flags, description, total, two aux words. */
    static final int DATA_HEADER = 1 + 1 + 1 + 4 + 8 + 8 + 8;
    /** The largest frame either side accepts. */
    static final int MAX_FRAME = CHUNK + DATA_HEADER;
    /** The largest frame an accepted connection may send before it authenticated; JOIN and HELLO are under 64. */
    static final int HANDSHAKE_MAX_FRAME = 256;
    /** The name of the frame decoder in a pipeline. */
    private static final String FRAMES = "frames";

    // Bootstrap (a joining rank and the id's root).
    static final byte JOIN = 1;
    static final byte TABLE = 2;
    static final byte REJECT = 3;
    // Mesh set-up and data (between ranks).
    static final byte HELLO = 4;
    static final byte DATA = 5;
    static final byte POISON = 6;
    static final byte GOODBYE = 7;
    static final byte PING = 8;

    /** Lanes: independent FIFO streams between two ranks, so pipelined phases never wait behind each other. */
    static final int LANE_SCATTER = 0;
    static final int LANE_GATHER = 1;
    static final int LANE_P2P = 2;
    /** Communicator management (split), read on the launch thread. */
    static final int LANE_CONTROL = 3;
    /** One-sided puts and signals: applied by the receiving rank's network thread, never queued for its stream. */
    static final int LANE_RMA = 4;
    static final int LANES = 5;

    /** Data frame flag: the aux long carries a PreMulSum scalar's raw bytes (a "device" scalar). */
    static final int FLAG_SCALAR_BYTES = 1;
    /** On an RMA frame: count a signal after the payload landed (the signal index and context are in aux double). */
    static final int FLAG_SIGNAL = 2;

    // Offsets inside a data frame (after the length prefix).
    static final int AT_LANE = 1;
    static final int AT_FLAGS = 2;
    static final int AT_DESC = 3;
    static final int AT_TOTAL = 7;
    static final int AT_AUX_DOUBLE = 15;
    static final int AT_AUX_LONG = 23;

    /** Outbound bytes queued per connection before a sender waits; bounds the memory a fast sender can use. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(4 * CHUNK, 16 * CHUNK);

    /** Kernel socket buffers large enough to keep a 1 MiB frame in flight. */
    static final int SOCKET_BUFFER = 4 * CHUNK;

    private Wire() {
    }

    /** Adds the framing codecs to a connection this process dialed: frames up to {@link #MAX_FRAME} from the start. */
    static void frame(ChannelPipeline p) {
        p.addLast(FRAMES, new Frames(true));
        p.addLast("prepend", new LengthFieldPrepender(4));
    }

    /**
     * Adds the framing codecs to a connection this process accepted: frames up to {@link #HANDSHAKE_MAX_FRAME} until
     * {@link #admit}; a longer one fails the decoder with a {@link TooLongFrameException} as soon as its length
     * field arrives, and nothing behind it is read.
     */
    static void frameUnauthenticated(ChannelPipeline p) {
        p.addLast(FRAMES, new Frames(false));
        p.addLast("prepend", new LengthFieldPrepender(4));
    }

    /** Lifts the pre-authentication limit of an accepted connection: its peer presented the token. On its event loop. */
    static void admit(ChannelPipeline p) {
        if (p.get(FRAMES) instanceof Frames f) f.admitted = true;
    }

    /** The frame decoder: length-prefixed frames up to {@link #MAX_FRAME}, or {@link #HANDSHAKE_MAX_FRAME} until admitted. */
    private static final class Frames extends LengthFieldBasedFrameDecoder {
        private boolean admitted;
        /** Set at a refused pre-authentication frame: the connection is closing, and what follows is not read. */
        private boolean failed;

        Frames(boolean admitted) {
            super(4 + MAX_FRAME, 0, 4, 0, 4);
            this.admitted = admitted;
            // Compose arriving socket reads instead of copying them into one buffer: a frame is copied once, by the
            // stream thread, into its destination.
            setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
        }

        @Override
        protected @Nullable Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
            if (failed) {
                in.skipBytes(in.readableBytes());
                return null;
            }
            if (!admitted && in.readableBytes() >= 4) {
                long length = in.getUnsignedInt(in.readerIndex());
                if (length > HANDSHAKE_MAX_FRAME) {
                    failed = true;
                    in.skipBytes(in.readableBytes());
                    throw new TooLongFrameException("a frame of " + length + " bytes before authentication (at most "
                            + HANDSHAKE_MAX_FRAME + ")");
                }
            }
            return super.decode(ctx, in);
        }
    }

    /** Options of every connection: no Nagle delay, bounded outbound queue. */
    static void configure(Channel ch) {
        ch.config().setOption(ChannelOption.TCP_NODELAY, true);
        ch.config().setWriteBufferWaterMark(WATER_MARK);
        ch.config().setOption(ChannelOption.SO_SNDBUF, SOCKET_BUFFER);
        ch.config().setOption(ChannelOption.SO_RCVBUF, SOCKET_BUFFER);
    }

    /** Compares secrets in time independent of where they differ. */
    static boolean sameToken(byte[] expected, byte[] presented) {
        return MessageDigest.isEqual(expected, presented);
    }

    static void writeAddress(ByteBuf b, InetSocketAddress a) {
        byte[] ip = a.getAddress().getAddress();
        b.writeByte(ip.length).writeBytes(Arrays.copyOf(ip, 16)).writeShort(a.getPort());
    }

    static InetSocketAddress readAddress(ByteBuf b) {
        int len = b.readUnsignedByte();
        byte[] raw = new byte[16];
        b.readBytes(raw);
        int port = b.readUnsignedShort();
        if (len != 4 && len != 16) throw new IllegalArgumentException("bad address length " + len);
        try {
            return new InetSocketAddress(InetAddress.getByAddress(Arrays.copyOf(raw, len)), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    static ByteBuf text(ByteBuf b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        return b.writeBytes(bytes, 0, Math.min(bytes.length, 4096));
    }

    static String readText(ByteBuf b) {
        return b.readCharSequence(Math.min(b.readableBytes(), 4096), StandardCharsets.UTF_8).toString();
    }
}
