package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.jccl.core.DataType;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The copy segments of one request ({@link KvGeometry}), checked against an independent computation: a byte map built
 * token by token and head by head from the layouts' definition (which destination byte takes which source byte),
 * never from the segments' own arithmetic. Random layouts and block tables come from fixed seeds.
 */
class KvGeometryTest {
    /** 2 heads of 2 floats: 8 bytes a head, 16 a token. */
    private static KvLayout.Builder layout() {
        return KvLayout.builder().layers(2).tensors(2).blocks(12).tokensPerBlock(4).kvHeads(2).headDim(2).type(DataType.FLOAT32);
    }

    /**
     * For every byte of the destination tensor, the source byte it must hold after the request, or -1 where the
     * request writes nothing: the definition of a paged layout, one token and one head at a time.
     */
    private static long[] expectedSources(KvLayout s, int[] sourceBlocks, KvLayout d, int[] destinationBlocks, int tokens) {
        long[] from = new long[(int) d.tensorBytes()];
        Arrays.fill(from, -1);
        long headBytes = s.headBytes();
        for (int token = 0; token < tokens; token++) {
            for (int head = 0; head < d.kvHeads(); head++) {
                int modelHead = d.headOffset() + head;
                long sourceHead = (long) sourceBlocks[token / s.tokensPerBlock()] * s.tokensPerBlock() * s.kvHeads() * headBytes
                        + (long) (token % s.tokensPerBlock()) * s.kvHeads() * headBytes
                        + (long) (modelHead - s.headOffset()) * headBytes;
                long destinationHead = (long) destinationBlocks[token / d.tokensPerBlock()] * d.tokensPerBlock() * d.kvHeads() * headBytes
                        + (long) (token % d.tokensPerBlock()) * d.kvHeads() * headBytes
                        + (long) head * headBytes;
                for (int b = 0; b < headBytes; b++) from[(int) (destinationHead + b)] = sourceHead + b;
            }
        }
        return from;
    }

    /** The same map as the segments of {@code g} write it; a destination byte written twice fails the test. */
    private static long[] actualSources(KvGeometry g, KvLayout d) {
        long[] from = new long[(int) d.tensorBytes()];
        Arrays.fill(from, -1);
        for (int i = 0; i < g.count(); i++) {
            for (long b = 0; b < g.length(i); b++) {
                int at = (int) (g.destination(i) + b);
                assertEquals(-1, from[at], "segment " + i + " writes destination byte " + at + " a second time");
                from[at] = g.source(i) + b;
            }
        }
        return from;
    }

    private static void assertMovesExactly(KvGeometry g, KvLayout s, int[] sourceBlocks, KvLayout d, int[] destinationBlocks,
                                           int tokens) {
        assertArrayEquals(expectedSources(s, sourceBlocks, d, destinationBlocks, tokens), actualSources(g, d));
        assertEquals((long) tokens * d.tokenBytes(), g.bytes(), "a tensor moves every token's row of the decode heads");
        for (int i = 0; i < g.count(); i++) {
            assertTrue(g.length(i) > 0, "segment " + i + " is empty");
            assertTrue(g.source(i) >= 0 && g.source(i) + g.length(i) <= s.tensorBytes(), "segment " + i + " reads outside the tensor");
        }
    }

    private static int[] ids(int... ids) {
        return ids;
    }

    @Test
    void sameBlockSizeAndHeadsMoveWholeBlocks() {
        KvLayout l = layout().build();
        int[] from = ids(7, 2, 11);
        int[] to = ids(0, 9, 4);
        int tokens = 10; // the last block is partly used, and still moves whole
        KvGeometry g = KvGeometry.of("r", l, from, l, to, tokens);
        assertEquals(3, g.count(), "one segment per block");
        for (int i = 0; i < g.count(); i++) {
            assertEquals(l.blockBytes(), g.length(i));
            assertEquals(from[i] * l.blockBytes(), g.source(i));
            assertEquals(to[i] * l.blockBytes(), g.destination(i));
        }
        // Whole blocks also carry the unused tail of the last block: the map covers its tokens and a whole block more.
        long[] expected = expectedSources(l, from, l, to, 12);
        assertArrayEquals(expected, actualSources(g, l));
    }

    @Test
    void otherTokensPerBlockMoveTokenRunsThatNeverCrossABlockOnEitherSide() {
        KvLayout prefill = layout().tokensPerBlock(4).build();
        KvLayout decode = layout().tokensPerBlock(6).blocks(8).build();
        int[] from = ids(5, 0, 9, 3); // 14 tokens: 4 blocks of 4
        int[] to = ids(6, 1, 2); // 3 blocks of 6
        int tokens = 14;
        KvGeometry g = KvGeometry.of("r", prefill, from, decode, to, tokens);
        assertMovesExactly(g, prefill, from, decode, to, tokens);
        // Runs: tokens 0-3 | 4-5 | 6-7 | 8-11 | 12-13, where either side's block changes.
        assertEquals(5, g.count());
        long[] runTokens = {4, 2, 2, 4, 2};
        for (int i = 0; i < g.count(); i++) assertEquals(runTokens[i] * decode.tokenBytes(), g.length(i), "run " + i);
    }

    @Test
    void aDecodeRankWithAShareOfTheHeadsMovesItsPartOfEachTokensRow() {
        KvLayout prefill = layout().kvHeads(4).build();
        KvLayout decode = layout().kvHeads(2).headOffset(2).build(); // the upper half of the heads
        int[] from = ids(3, 8);
        int[] to = ids(10, 1);
        int tokens = 7;
        KvGeometry g = KvGeometry.of("r", prefill, from, decode, to, tokens);
        assertMovesExactly(g, prefill, from, decode, to, tokens);
        assertEquals(tokens, g.count(), "one sub-row per token");
        for (int i = 0; i < g.count(); i++) assertEquals(decode.tokenBytes(), g.length(i));
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 5})
    void randomLayoutsAndBlockTablesMoveExactlyTheBytesTheLayoutsDefine(long seed) {
        Random random = new Random(seed);
        int[] tokensPerBlock = {1, 2, 3, 4, 8};
        for (int round = 0; round < 200; round++) {
            int prefillHeads = 1 + random.nextInt(4);
            int prefillOffset = random.nextInt(3);
            int decodeHeads = random.nextBoolean() ? prefillHeads : 1 + random.nextInt(prefillHeads);
            int decodeOffset = prefillOffset + random.nextInt(prefillHeads - decodeHeads + 1);
            KvLayout s = layout().blocks(6 + random.nextInt(10)).tokensPerBlock(tokensPerBlock[random.nextInt(5)])
                    .kvHeads(prefillHeads).headOffset(prefillOffset).build();
            KvLayout d = layout().blocks(6 + random.nextInt(10)).tokensPerBlock(tokensPerBlock[random.nextInt(5)])
                    .kvHeads(decodeHeads).headOffset(decodeOffset).build();
            int most = Math.min(s.blocks() * s.tokensPerBlock(), d.blocks() * d.tokensPerBlock());
            int tokens = 1 + random.nextInt(most);
            int[] from = KvRig.randomBlocks(random, s.blocksFor(tokens), s.blocks());
            int[] to = KvRig.randomBlocks(random, d.blocksFor(tokens), d.blocks());
            KvGeometry g = KvGeometry.of("r", s, from, d, to, tokens);
            String where = "seed " + seed + " round " + round + ": " + s + " → " + d + ", " + tokens + " tokens";
            boolean wholeBlocks = s.tokensPerBlock() == d.tokensPerBlock() && prefillHeads == decodeHeads
                    && prefillOffset == decodeOffset;
            if (wholeBlocks) {
                // Whole blocks: the last block's unused tail moves too, as if every block were full.
                assertEquals(from.length, g.count(), where);
                assertArrayEquals(expectedSources(s, from, d, to, from.length * s.tokensPerBlock()), actualSources(g, d), where);
            } else {
                assertMovesExactly(g, s, from, d, to, tokens);
                assertEquals(expectedSegmentCount(s, d, tokens), g.count(), where);
            }
        }
    }

    /** Token runs end where either side's block does; a decode rank with a share of the heads moves a token at a time. */
    private static int expectedSegmentCount(KvLayout s, KvLayout d, int tokens) {
        if (s.kvHeads() != d.kvHeads()) return tokens;
        Set<List<Integer>> blockPairs = new HashSet<>();
        for (int t = 0; t < tokens; t++) blockPairs.add(List.of(t / s.tokensPerBlock(), t / d.tokensPerBlock()));
        return blockPairs.size();
    }

    @Test
    void theReceiversGeometryWithoutSourceIdsHasTheSameDestinationsAndLengths() {
        KvLayout prefill = layout().tokensPerBlock(3).kvHeads(4).build();
        KvLayout decode = layout().tokensPerBlock(5).kvHeads(2).headOffset(1).build();
        int tokens = 13;
        int[] from = ids(11, 4, 0, 7, 2);
        int[] to = ids(3, 9, 6);
        KvGeometry sender = KvGeometry.of("r", prefill, from, decode, to, tokens);
        KvGeometry receiver = KvGeometry.of("r", prefill, KvGeometry.sourceUnknown(prefill, tokens), decode, to, tokens);
        assertEquals(sender.count(), receiver.count());
        for (int i = 0; i < sender.count(); i++) {
            assertEquals(sender.destination(i), receiver.destination(i));
            assertEquals(sender.length(i), receiver.length(i));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 7, 16, 40, 100, 1 << 20})
    void piecesSplitTheSegmentsInOrderIntoFullSlotsAndOneRest(long maxBytes) {
        KvLayout prefill = layout().tokensPerBlock(4).kvHeads(4).build();
        KvLayout decode = layout().tokensPerBlock(2).kvHeads(3).headOffset(1).build();
        int tokens = 9;
        KvGeometry whole = KvGeometry.of("r", prefill, ids(2, 0, 5), decode, ids(1, 3, 8, 0, 11), tokens);
        List<KvGeometry> pieces = whole.pieces(maxBytes);
        assertEquals((whole.bytes() + maxBytes - 1) / maxBytes, pieces.size());
        for (int p = 0; p < pieces.size(); p++) {
            long expected = p < pieces.size() - 1 ? maxBytes : whole.bytes() - maxBytes * (pieces.size() - 1);
            assertEquals(expected, pieces.get(p).bytes(), "piece " + p);
        }
        // Read back to back, the pieces are the whole request's bytes in the same order (a slot packs them so).
        assertArrayEquals(packedOrder(List.of(whole)), packedOrder(pieces));
    }

    /** Every byte the geometries move as (source, destination) pairs, in the order a staging slot packs them. */
    private static long[] packedOrder(List<KvGeometry> geometries) {
        long total = geometries.stream().mapToLong(KvGeometry::bytes).sum();
        long[] order = new long[(int) (2 * total)];
        int at = 0;
        for (KvGeometry g : geometries) {
            for (int i = 0; i < g.count(); i++) {
                for (long b = 0; b < g.length(i); b++) {
                    order[at++] = g.source(i) + b;
                    order[at++] = g.destination(i) + b;
                }
            }
        }
        return order;
    }

    @Test
    void piecesOfNothingOrLessAreRefused() {
        KvLayout l = layout().build();
        KvGeometry g = KvGeometry.of("r", l, ids(0), l, ids(1), 4);
        assertThrows(IllegalArgumentException.class, () -> g.pieces(0));
        assertThrows(IllegalArgumentException.class, () -> g.pieces(-16));
    }

    private static void assertRefused(String fragment, Runnable call) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call::run);
        assertTrue(e.getMessage().contains(fragment), "'" + e.getMessage() + "' does not say '" + fragment + "'");
    }

    @Test
    void idsOutsideEitherPoolAreRefusedNamingTheRequest() {
        KvLayout l = layout().build(); // blocks 0..11
        assertRefused("req-1: source block 12", () -> KvGeometry.of("req-1", l, ids(0, 12), l, ids(0, 1), 8));
        assertRefused("req-1: source block -1", () -> KvGeometry.of("req-1", l, ids(-1, 3), l, ids(0, 1), 8));
        assertRefused("req-1: destination block 12", () -> KvGeometry.of("req-1", l, ids(0, 1), l, ids(12, 0), 8));
        assertRefused("req-1: destination block -5", () -> KvGeometry.of("req-1", l, ids(0, 1), l, ids(1, -5), 8));
    }

    @Test
    void repeatedIdsAreRefusedOnEitherSide() {
        KvLayout l = layout().build();
        assertRefused("source block 3 is given twice", () -> KvGeometry.of("r", l, ids(3, 1, 3), l, ids(0, 1, 2), 12));
        assertRefused("destination block 2 is given twice", () -> KvGeometry.of("r", l, ids(0, 1, 4), l, ids(2, 5, 2), 12));
    }

    @Test
    void idCountsThatDoNotFitTheTokensAreRefused() {
        KvLayout prefill = layout().tokensPerBlock(4).build();
        KvLayout decode = layout().tokensPerBlock(8).build();
        // 9 tokens: 3 blocks of 4 on the prefill side, 2 of 8 on the decode side.
        assertRefused("source side needs 3 block id(s) for its tokens, not 2",
                () -> KvGeometry.of("r", prefill, ids(0, 1), decode, ids(0, 1), 9));
        assertRefused("source side needs 3 block id(s) for its tokens, not 4",
                () -> KvGeometry.of("r", prefill, ids(0, 1, 2, 3), decode, ids(0, 1), 9));
        assertRefused("destination side needs 2 block id(s) for its tokens, not 3",
                () -> KvGeometry.of("r", prefill, ids(0, 1, 2), decode, ids(0, 1, 2), 9));
        assertRefused("at least one token", () -> KvGeometry.of("r", prefill, ids(), decode, ids(), 0));
    }

    @Test
    void layoutsThatCannotExchangeBlocksAreRefused() {
        KvLayout l = layout().build();
        for (KvLayout other : List.of(layout().layers(3).build(), layout().tensors(1).build(), layout().headDim(4).build(),
                layout().type(DataType.BFLOAT16).build())) {
            assertRefused("cannot exchange blocks", () -> KvGeometry.checkCompatible(l, other));
            assertRefused("cannot exchange blocks", () -> KvGeometry.of("r", l, ids(0), other, ids(0), 1));
        }
    }

    @Test
    void decodeHeadsThePrefillRankDoesNotHoldAreRefused() {
        KvLayout prefill = layout().kvHeads(2).headOffset(2).build(); // heads [2, 4)
        for (KvLayout decode : List.of(layout().kvHeads(1).headOffset(1).build(), // starts below
                layout().kvHeads(2).headOffset(3).build(), // ends above
                layout().kvHeads(3).headOffset(2).build(), // more than it holds
                layout().kvHeads(1).headOffset(4).build())) { // wholly outside
            assertRefused("do not cover", () -> KvGeometry.checkCompatible(prefill, decode));
            assertRefused("do not cover", () -> KvGeometry.of("r", prefill, ids(0), decode, ids(0), 1));
        }
    }
}
