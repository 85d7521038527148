package org.jccl.rma.kv;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.jccl.core.DataType;
import org.jccl.core.error.InvalidArgumentException;

/**
 * The control messages between a KV sender and a KV receiver, over one link per pair: set-up, then per request the
 * announcement, the grant of destination blocks, each layer's (or staged piece's) arrival, completion and cancellation.
 * Data never travels here: only ids, counts and small records. Encoded as a tag byte and fixed fields for links between
 * processes; passed as objects between ranks of one process.
 */
sealed interface KvMessage {
    /**
     * Sender → receiver, first: who it is, its layout, the path it chose and its staging slots' size (a staged piece
     * is the smaller of both sides' slots).
     */
    record Hello(int rank, KvLayout layout, KvPathKind path, long slotBytes) implements KvMessage {
    }

    /**
     * Receiver → sender, the answer to {@link Hello}: its layout and staging slots (where they start in its window, and
     * their size), or why it refuses (empty when it accepts).
     */
    record Welcome(int rank, KvLayout layout, long stagingOffset, long slotBytes, String refusal) implements KvMessage {
    }

    /** Sender → receiver: a request that wants {@code tokens} tokens of blocks, within {@code deadlineMillis}. */
    record Announce(long id, String name, int tokens, long deadlineMillis) implements KvMessage {
    }

    /**
     * Receiver → sender: the destination blocks granted to a request, and where a direct path that signals layers on
     * the device raises layer {@code l}'s signal: the word at {@code signalOffset + 8 l} of the receiver's window, set to
     * {@code signalValue} ({@code -1}: no signals).
     */
    record Grant(long id, int[] blocks, long signalOffset, long signalValue) implements KvMessage {
    }

    /** Direct paths, sender → receiver: every tensor of {@code layer} landed in the receiver's pool. */
    record LayerDone(long id, int layer) implements KvMessage {
    }

    /** Staged paths, sender → receiver: {@code pieces} more pieces of the request's layers want staging slots. */
    record Want(long id, int pieces) implements KvMessage {
    }

    /** Staged paths, receiver → sender: a staging slot the sender may fill (for request {@code id}). */
    record Slot(long id, int slot) implements KvMessage {
    }

    /** Staged paths, sender → receiver: piece {@code piece} of {@code layer}, tensor {@code tensor}, was issued into {@code slot}. */
    record PieceSent(long id, int layer, int tensor, int piece, int slot) implements KvMessage {
    }

    /** Receiver → sender: every layer is usable on the receiver. */
    record Complete(long id) implements KvMessage {
    }

    /** Either side: end the request; the other side stops issuing and answers {@link Cancelled} once nothing is in flight. */
    record Cancel(long id, KvFailure reason, String detail) implements KvMessage {
    }

    /** The answer to {@link Cancel}: nothing of the request is in flight on this side any more. */
    record Cancelled(long id) implements KvMessage {
    }

    /** Either side, before it closes the link: no new requests; those in flight were ended with {@link Cancel}. */
    record Goodbye(String reason) implements KvMessage {
    }

    // ---- encoding, for links between processes

    int HELLO = 1;
    int WELCOME = 2;
    int ANNOUNCE = 3;
    int GRANT = 4;
    int LAYER_DONE = 5;
    int WANT = 6;
    int SLOT = 7;
    int PIECE_SENT = 8;
    int COMPLETE = 9;
    int CANCEL = 10;
    int CANCELLED = 11;
    int GOODBYE = 12;
    /** The longest diagnostic text a message carries whole, in chars. */
    int MAX_TEXT = 16_000;

    static byte[] encode(KvMessage m) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            if (m instanceof Hello h) {
                out.writeByte(HELLO);
                out.writeInt(h.rank());
                writeLayout(out, h.layout());
                out.writeByte(h.path().ordinal());
                out.writeLong(h.slotBytes());
            } else if (m instanceof Welcome w) {
                out.writeByte(WELCOME);
                out.writeInt(w.rank());
                writeLayout(out, w.layout());
                out.writeLong(w.stagingOffset());
                out.writeLong(w.slotBytes());
                writeText(out, w.refusal());
            } else if (m instanceof Announce a) {
                out.writeByte(ANNOUNCE);
                out.writeLong(a.id());
                out.writeUTF(a.name()); // whole: KvRequest keeps names short enough
                out.writeInt(a.tokens());
                out.writeLong(a.deadlineMillis());
            } else if (m instanceof Grant g) {
                out.writeByte(GRANT);
                out.writeLong(g.id());
                out.writeInt(g.blocks().length);
                for (int b : g.blocks()) out.writeInt(b);
                out.writeLong(g.signalOffset());
                out.writeLong(g.signalValue());
            } else if (m instanceof LayerDone d) {
                out.writeByte(LAYER_DONE);
                out.writeLong(d.id());
                out.writeInt(d.layer());
            } else if (m instanceof Want w) {
                out.writeByte(WANT);
                out.writeLong(w.id());
                out.writeInt(w.pieces());
            } else if (m instanceof Slot s) {
                out.writeByte(SLOT);
                out.writeLong(s.id());
                out.writeInt(s.slot());
            } else if (m instanceof PieceSent p) {
                out.writeByte(PIECE_SENT);
                out.writeLong(p.id());
                out.writeInt(p.layer());
                out.writeInt(p.tensor());
                out.writeInt(p.piece());
                out.writeInt(p.slot());
            } else if (m instanceof Complete c) {
                out.writeByte(COMPLETE);
                out.writeLong(c.id());
            } else if (m instanceof Cancel c) {
                out.writeByte(CANCEL);
                out.writeLong(c.id());
                out.writeByte(c.reason().ordinal());
                writeText(out, c.detail());
            } else if (m instanceof Cancelled c) {
                out.writeByte(CANCELLED);
                out.writeLong(c.id());
            } else if (m instanceof Goodbye g) {
                out.writeByte(GOODBYE);
                writeText(out, g.reason());
            }

        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes one message; a malformed one, or one with values no sender makes (an impossible layout, a request of no
     * tokens), throws {@link IllegalArgumentException} and nothing else (the link is then dropped).
     */
    static KvMessage decode(byte[] frame) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(frame))) {
            int tag = in.readUnsignedByte();
            KvMessage m = switch (tag) {
                case HELLO -> new Hello(in.readInt(), readLayout(in), enumAt(KvPathKind.values(), in.readUnsignedByte()), in.readLong());
                case WELCOME -> new Welcome(in.readInt(), readLayout(in), in.readLong(), in.readLong(), in.readUTF());
                case ANNOUNCE -> {
                    Announce a = new Announce(in.readLong(), in.readUTF(), in.readInt(), in.readLong());
                    if (a.tokens() <= 0 || a.deadlineMillis() <= 0) throw new IllegalArgumentException("an impossible " + a);
                    yield a;
                }
                case GRANT -> {
                    long id = in.readLong();
                    int n = in.readInt();
                    if (n < 0 || n > frame.length / 4) throw new IllegalArgumentException("a grant of " + n + " blocks");
                    int[] blocks = new int[n];
                    for (int i = 0; i < n; i++) blocks[i] = in.readInt();
                    Grant g = new Grant(id, blocks, in.readLong(), in.readLong());
                    if (g.signalOffset() < -1 || g.signalValue() < 0) throw new IllegalArgumentException("an impossible grant signal");
                    yield g;
                }
                case LAYER_DONE -> new LayerDone(in.readLong(), in.readInt());
                case WANT -> {
                    Want w = new Want(in.readLong(), in.readInt());
                    if (w.pieces() <= 0) throw new IllegalArgumentException("an impossible " + w);
                    yield w;
                }
                case SLOT -> new Slot(in.readLong(), in.readInt());
                case PIECE_SENT -> new PieceSent(in.readLong(), in.readInt(), in.readInt(), in.readInt(), in.readInt());
                case COMPLETE -> new Complete(in.readLong());
                case CANCEL -> new Cancel(in.readLong(), enumAt(KvFailure.values(), in.readUnsignedByte()), in.readUTF());
                case CANCELLED -> new Cancelled(in.readLong());
                case GOODBYE -> new Goodbye(in.readUTF());
                default -> throw new IllegalArgumentException("unknown KV message tag " + tag);
            };
            if (in.available() > 0) throw new IllegalArgumentException(in.available() + " stray bytes after " + m);
            return m;
        } catch (IOException e) {
            throw new IllegalArgumentException("a truncated KV message: " + e.getMessage(), e);
        } catch (InvalidArgumentException e) { // a layout no rank can have: the frame is as bad as a truncated one
            throw new IllegalArgumentException("a KV message with an impossible layout: " + e.getMessage(), e);
        }
    }

    /**
     * Writes a diagnostic text (a reason, a refusal), cut to {@link #MAX_TEXT} chars with a final "…": modified UTF-8
     * takes at most 3 bytes a char, so it always fits the 65,535 bytes of a text field.
     */
    private static void writeText(DataOutputStream out, String text) throws IOException {
        out.writeUTF(text.length() <= MAX_TEXT ? text : text.substring(0, MAX_TEXT) + "…");
    }

    private static void writeLayout(DataOutputStream out, KvLayout l) throws IOException {
        out.writeInt(l.layers());
        out.writeInt(l.tensors());
        out.writeInt(l.blocks());
        out.writeInt(l.tokensPerBlock());
        out.writeInt(l.kvHeads());
        out.writeInt(l.headDim());
        out.writeByte(l.type().ordinal());
        out.writeInt(l.headOffset());
    }

    private static KvLayout readLayout(DataInputStream in) throws IOException {
        return new KvLayout(in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(),
                enumAt(DataType.values(), in.readUnsignedByte()), in.readInt());
    }

    private static <E> E enumAt(E[] values, int ordinal) {
        if (ordinal >= values.length) throw new IllegalArgumentException("no value " + ordinal + " of " + values[0].getClass().getSimpleName());
        return values[ordinal];
    }
}
