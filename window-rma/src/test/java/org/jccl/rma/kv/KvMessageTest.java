package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.jccl.core.DataType;
import org.jccl.rma.kv.KvMessage.Announce;
import org.jccl.rma.kv.KvMessage.Cancel;
import org.jccl.rma.kv.KvMessage.Cancelled;
import org.jccl.rma.kv.KvMessage.Complete;
import org.jccl.rma.kv.KvMessage.Goodbye;
import org.jccl.rma.kv.KvMessage.Grant;
import org.jccl.rma.kv.KvMessage.Hello;
import org.jccl.rma.kv.KvMessage.LayerDone;
import org.jccl.rma.kv.KvMessage.PieceSent;
import org.jccl.rma.kv.KvMessage.Slot;
import org.jccl.rma.kv.KvMessage.Want;
import org.jccl.rma.kv.KvMessage.Welcome;
import org.junit.jupiter.api.Test;

/**
 * The binary codec of the KV control messages, the only input a KV link takes from another process: every message
 * survives the round trip field for field, and every malformed frame is refused with an {@link IllegalArgumentException}
 * (the link drops the peer then) and nothing else.
 */
class KvMessageTest {
    private static final KvLayout LAYOUT = KvLayout.builder().layers(32).tensors(2).blocks(4096).tokensPerBlock(16).kvHeads(8)
            .headDim(128).type(DataType.BFLOAT16).headOffset(8).build();

    /** Every kind of message, with every value of its enums and extremes of its numbers. */
    private static List<KvMessage> samples() {
        List<KvMessage> all = new ArrayList<>();
        for (KvPathKind path : KvPathKind.values()) all.add(new Hello(3, LAYOUT, path, 1L << 40));
        all.add(new Hello(0, KvLayout.builder().layers(1).tensors(1).blocks(1).tokensPerBlock(1).kvHeads(1).headDim(1)
                .type(DataType.FLOAT8_E5M2).build(), KvPathKind.AUTO, 0));
        all.add(new Welcome(1, LAYOUT, 1L << 33, 4096, ""));
        all.add(new Welcome(1, LAYOUT, 0, 0, "the receiver is closing — «refused» ✓"));
        all.add(new Announce(Long.MAX_VALUE, "req-42/ünïcode ✓", Integer.MAX_VALUE, Long.MAX_VALUE));
        all.add(new Announce(1, "r", 1, 1));
        all.add(new Grant(7, new int[] {0, 4095, 17, Integer.MAX_VALUE}, 1 << 20, 3));
        all.add(new Grant(8, new int[0], -1, 0));
        all.add(new LayerDone(9, 31));
        all.add(new Want(10, Integer.MAX_VALUE));
        all.add(new Slot(11, 3));
        all.add(new PieceSent(12, 31, 1, 1000, 3));
        all.add(new PieceSent(13, -1, -1, -1, 2)); // a piece of nothing: the request ended before its slot was filled
        all.add(new Complete(Long.MIN_VALUE));
        for (KvFailure reason : KvFailure.values()) all.add(new Cancel(14, reason, "because " + reason));
        all.add(new Cancelled(15));
        all.add(new Goodbye("the sender closed"));
        all.add(new Goodbye(""));
        return all;
    }

    /** Records with an array component (a grant's blocks) compare the arrays' contents, not their identity. */
    private static void assertSameMessage(KvMessage expected, KvMessage actual) {
        assertEquals(expected.getClass(), actual.getClass());
        for (RecordComponent c : expected.getClass().getRecordComponents()) {
            try {
                Object e = c.getAccessor().invoke(expected);
                Object a = c.getAccessor().invoke(actual);
                if (e instanceof int[] ints) assertArrayEquals(ints, (int[]) a, c.getName());
                else assertEquals(e, a, expected + ": " + c.getName());
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void everyKindOfMessageIsSampled() {
        Set<Class<?>> sampled = samples().stream().map(Object::getClass).collect(Collectors.toSet());
        assertEquals(Set.of(KvMessage.class.getPermittedSubclasses()), sampled);
    }

    @Test
    void everyMessageDecodesToAnEqualMessage() {
        for (KvMessage m : samples()) assertSameMessage(m, KvMessage.decode(KvMessage.encode(m)));
    }

    @Test
    void everyTruncatedFrameIsRefused() {
        for (KvMessage m : samples()) {
            byte[] frame = KvMessage.encode(m);
            for (int length = 0; length < frame.length; length++) {
                byte[] cut = Arrays.copyOf(frame, length);
                assertThrows(IllegalArgumentException.class, () -> KvMessage.decode(cut), m + " cut to " + length + " bytes");
            }
        }
    }

    @Test
    void strayBytesAfterAMessageAreRefused() {
        for (KvMessage m : samples()) {
            byte[] frame = KvMessage.encode(m);
            byte[] longer = Arrays.copyOf(frame, frame.length + 1);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvMessage.decode(longer), m::toString);
            assertTrue(e.getMessage().contains("stray"), e.getMessage());
        }
    }

    @Test
    void unknownTagsAreRefused() {
        Set<Integer> known = samples().stream().map(m -> KvMessage.encode(m)[0] & 0xff).collect(Collectors.toSet());
        for (int tag = 0; tag < 256; tag++) {
            if (known.contains(tag)) continue;
            byte[] frame = {(byte) tag, 0, 0, 0, 0, 0, 0, 0, 1};
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvMessage.decode(frame));
            assertTrue(e.getMessage().contains("unknown KV message tag " + tag), e.getMessage());
        }
    }

    /** A frame written field by field, to say what no encoder would. */
    private interface Fields {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] frame(Fields fields) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            fields.write(out);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return bytes.toByteArray();
    }

    private static void writeLayout(DataOutputStream out, int layers, int blocks, int type) throws IOException {
        out.writeInt(layers);
        out.writeInt(2);
        out.writeInt(blocks);
        out.writeInt(16);
        out.writeInt(8);
        out.writeInt(128);
        out.writeByte(type);
        out.writeInt(0);
    }

    private static void assertRefused(byte[] frame, String what) {
        try {
            KvMessage m = KvMessage.decode(frame);
            fail(what + " decoded as " + m);
        } catch (IllegalArgumentException expected) {
            // the only way a frame may be refused
        } catch (RuntimeException other) {
            fail(what + " threw " + other + " instead of an IllegalArgumentException", other);
        }
    }

    @Test
    void absurdLengthsAreRefusedBeforeAnythingIsAllocated() {
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.GRANT);
            out.writeLong(1);
            out.writeInt(Integer.MAX_VALUE);
        }), "a grant of 2^31-1 blocks");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.GRANT);
            out.writeLong(1);
            out.writeInt(-1);
        }), "a grant of -1 blocks");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.GRANT);
            out.writeLong(1);
            out.writeInt(3);
            out.writeInt(0);
        }), "a grant of 3 blocks that brings 1");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.ANNOUNCE);
            out.writeLong(1);
            out.writeShort(65535); // a name of 64 KiB, and none follows
        }), "a name longer than its frame");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.HELLO);
            out.writeInt(0);
            writeLayout(out, Integer.MAX_VALUE, Integer.MAX_VALUE, DataType.FLOAT64.ordinal());
            out.writeByte(0);
            out.writeLong(0);
        }), "a pool of more bytes than a long holds");
    }

    @Test
    void valuesNoMessageCanHoldAreRefused() {
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.HELLO);
            out.writeInt(0);
            writeLayout(out, 0, 16, 0);
            out.writeByte(0);
            out.writeLong(0);
        }), "a layout of no layers");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.WELCOME);
            out.writeInt(0);
            writeLayout(out, 4, 16, 200);
            out.writeLong(0);
            out.writeLong(0);
            out.writeUTF("");
        }), "an element type that does not exist");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.HELLO);
            out.writeInt(0);
            writeLayout(out, 4, 16, 0);
            out.writeByte(KvPathKind.values().length);
            out.writeLong(0);
        }), "a path that does not exist");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.CANCEL);
            out.writeLong(1);
            out.writeByte(KvFailure.values().length);
            out.writeUTF("");
        }), "a failure that does not exist");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.ANNOUNCE);
            out.writeLong(1);
            out.writeUTF("r");
            out.writeInt(0);
            out.writeLong(1000);
        }), "a request of no tokens");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.ANNOUNCE);
            out.writeLong(1);
            out.writeUTF("r");
            out.writeInt(16);
            out.writeLong(-1);
        }), "a request whose deadline has passed before it was made");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.WANT);
            out.writeLong(1);
            out.writeInt(0);
        }), "a want of no pieces (slots would go round for nothing)");
        assertRefused(frame(out -> {
            out.writeByte(KvMessage.GOODBYE);
            out.writeShort(2);
            out.write(new byte[] {(byte) 0xC0, 0x01}); // not modified UTF-8
        }), "a text that is not UTF-8");
    }

    /**
     * Seeded random frames, and valid frames with random bytes changed: decoding either refuses them with an
     * {@link IllegalArgumentException} or yields a message that survives its own round trip. A fixed seed, so a failure
     * replays; {@code -Djccl.kv.fuzz.seed=...} and {@code -Djccl.kv.fuzz.rounds=...} (default 20,000) explore further.
     */
    @Test
    void randomAndMangledFramesAreRefusedOrDecodedNeverAnythingElse() {
        long seed = Long.getLong("jccl.kv.fuzz.seed", 20261127L);
        int rounds = Integer.getInteger("jccl.kv.fuzz.rounds", 20_000);
        Random random = new Random(seed);
        List<byte[]> valid = samples().stream().map(KvMessage::encode).toList();
        int decoded = 0;
        for (int round = 0; round < rounds; round++) {
            byte[] frame;
            if (round % 2 == 0) {
                frame = new byte[random.nextInt(64)];
                random.nextBytes(frame);
                if (frame.length > 0 && random.nextBoolean()) frame[0] = (byte) (1 + random.nextInt(12)); // a known tag
            } else {
                frame = valid.get(random.nextInt(valid.size())).clone();
                for (int n = 1 + random.nextInt(3); n > 0 && frame.length > 0; n--) frame[random.nextInt(frame.length)] = (byte) random.nextInt();
                if (random.nextInt(8) == 0) frame = Arrays.copyOf(frame, Math.max(0, frame.length + random.nextInt(5) - 2));
            }
            KvMessage m;
            try {
                m = KvMessage.decode(frame);
            } catch (IllegalArgumentException refused) {
                continue;
            } catch (RuntimeException other) {
                throw new AssertionError("seed " + seed + " round " + round + ": " + Arrays.toString(frame) + " threw " + other, other);
            }
            decoded++;
            assertSameMessage(m, KvMessage.decode(KvMessage.encode(m)));
        }
        assertTrue(decoded > 0, "the mangled frames reached the decoder's fields");
    }

    @Test
    void textsLongerThanAFrameHoldsAreCutNotThrown() {
        String huge = "ü".repeat(40_000); // 80,000 bytes of modified UTF-8: more than a text field's 65,535
        for (KvMessage m : List.<KvMessage>of(new Goodbye(huge), new Cancel(1, KvFailure.TRANSFER_FAILED, huge),
                new Welcome(1, LAYOUT, 0, 0, huge))) {
            KvMessage back = KvMessage.decode(KvMessage.encode(m));
            String text = back instanceof Goodbye g ? g.reason() : back instanceof Cancel c ? c.detail() : ((Welcome) back).refusal();
            assertTrue(text.length() < huge.length() && huge.startsWith(text.substring(0, text.length() - 1)), m.getClass().getSimpleName());
            assertTrue(text.endsWith("…"), "a cut text says so");
        }
    }

    @Test
    void aRequestNameTheWireCannotCarryIsRefusedWhenTheRequestIsMade() {
        String tooLong = "x".repeat(KvRequest.MAX_NAME_LENGTH + 1);
        assertThrows(org.jccl.core.error.InvalidArgumentException.class,
                () -> new KvRequest(tooLong, 1, 4, new int[] {0}, KvRig.seconds(1)));
        String longest = "あ".repeat(KvRequest.MAX_NAME_LENGTH); // 3 bytes each: still fits a text field
        Announce a = new Announce(1, new KvRequest(longest, 1, 4, new int[] {0}, KvRig.seconds(1)).name(), 4, 1000);
        assertSameMessage(a, KvMessage.decode(KvMessage.encode(a))); // the name whole: the receiver's events carry it
    }
}
