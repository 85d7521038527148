package org.jccl.core.rendezvous;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * A hand-driven connection for protocol tests: writes arbitrary bytes and frames, and reads frames with a blocking
 * socket (with a read timeout, so a test never hangs). It speaks the handshake itself, through the same
 * {@link Handshake} the client uses.
 */
final class RawPeer implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    RawPeer(InetSocketAddress server) throws IOException {
        socket = new Socket();
        socket.connect(server, 5_000);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void writeFrame(MessageType type, int requestId, byte[] payload) throws IOException {
        writeRaw(frameBytes(type.code, requestId, payload));
    }

    static byte[] frameBytes(int typeCode, int requestId, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(4 + Frame.HEADER_BYTES + payload.length);
        b.putInt(Frame.HEADER_BYTES + payload.length).put((byte) typeCode).putInt(requestId).put(payload);
        return b.array();
    }

    Frame readFrame() throws IOException {
        int length = in.readInt();
        int type = in.readUnsignedByte();
        int id = in.readInt();
        byte[] payload = new byte[length - Frame.HEADER_BYTES];
        in.readFully(payload);
        MessageType t = MessageType.of(type);
        if (t == null) throw new IOException("unknown type " + type);
        return new Frame(t, id, payload);
    }

    /** Reads the challenge and answers it; returns the server's answer (JOINED, or ERROR). */
    Frame join(byte[] secret, int rank, int worldSize) throws IOException {
        PayloadReader challenge = new PayloadReader(expect(MessageType.CHALLENGE).payload());
        challenge.u8();
        byte[] serverNonce = challenge.raw(Handshake.NONCE_BYTES);
        byte[] clientNonce = Handshake.nonce();
        byte[] proof = Handshake.clientProof(secret, serverNonce, clientNonce, rank, worldSize);
        writeFrame(MessageType.JOIN, 0, new PayloadWriter().i32(rank).i32(worldSize).raw(clientNonce).raw(proof).toByteArray());
        return readFrame();
    }

    Frame expect(MessageType type) throws IOException {
        Frame f = readFrame();
        if (f.type() != type) throw new IOException("expected " + type + ", got " + f.type());
        return f;
    }

    /**
     * Reads the ERROR the server sends before it closes a connection for a fault, and returns its message.
     *
     * @throws IOException if the next frame is not an ERROR with that code
     */
    String refusal(ErrorCode code) throws IOException {
        PayloadReader error = new PayloadReader(expect(MessageType.ERROR).payload());
        int actual = error.u16();
        String message = error.string();
        error.end();
        if (actual != code.code) throw new IOException("expected error " + code + ", got code " + actual + ": " + message);
        return message;
    }

    /** Whether the server closes this connection: reads (discarding frames) until end of stream or a reset. */
    boolean closedByServer() throws IOException {
        try {
            while (in.read() >= 0) {
                // drain whatever the server sent before closing (a challenge, an error)
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true; // connection reset
        } catch (EOFException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
