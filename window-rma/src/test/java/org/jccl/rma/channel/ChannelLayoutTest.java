package org.jccl.rma.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** Where a channel keeps what in its window, and the sizes it refuses before anything is made. */
class ChannelLayoutTest {
    @Test
    void slotsAreAHeaderAndABlockRoundedUpTo256Bytes() {
        assertEquals(256, new ChannelLayout(4, 64).slotStride());
        assertEquals(256, new ChannelLayout(4, 192).slotStride());
        assertEquals(512, new ChannelLayout(4, 193).slotStride());
        assertEquals(512, new ChannelLayout(4, 448).slotStride());
        assertEquals(768, new ChannelLayout(4, 449).slotStride());
        assertEquals(256, new ChannelLayout(1, 1).slotStride());
    }

    @Test
    void aSequenceNumberMapsOntoItsSlotRoundTheRing() {
        ChannelLayout l = new ChannelLayout(3, 600); // stride 768
        assertEquals(0, l.slotOffset(0));
        assertEquals(768, l.slotOffset(1));
        assertEquals(1536, l.slotOffset(2));
        assertEquals(0, l.slotOffset(3));
        assertEquals(768, l.slotOffset(7));
    }

    @Test
    void theClosingAreaAndItsSourceFollowTheSlots() {
        ChannelLayout l = new ChannelLayout(3, 600);
        assertEquals(3 * 768, l.closingOffset());
        assertEquals(3 * 768 + 64, l.closingSourceOffset());
        assertEquals(3 * 768 + 128, l.windowBytes());
        assertTrue(ChannelLayout.RECORD_BYTES <= ChannelLayout.WORD, "a record fits its area");
    }

    @Test
    void aClosingRecordsCheckValueDependsOnEveryField() {
        long check = ChannelLayout.check(ChannelLayout.FIN, 12, 9);
        assertEquals(check, ChannelLayout.check(ChannelLayout.FIN, 12, 9));
        Set<Long> values = new HashSet<>();
        for (long kind : new long[] {ChannelLayout.FIN, ChannelLayout.CANCEL}) {
            for (long waits = 0; waits < 5; waits++) {
                for (long credits = 0; credits < 5; credits++) values.add(ChannelLayout.check(kind, waits, credits));
            }
        }
        assertEquals(50, values.size(), "no two records share a check value");
        assertNotEquals(0L, ChannelLayout.check(0, 0, 0), "a cleared area is not a complete record");
        assertEquals(~(ChannelLayout.FIN * 31 + 12) * 31 + 9 ^ 0x5ca1ab1eL, check);
    }

    @Test
    void theHeaderFlagsAndRecordKindsAreDistinct() {
        long[] flags = {ChannelLayout.END, ChannelLayout.FAILED, ChannelLayout.CANCELLED, ChannelLayout.ACK};
        long seen = 0;
        for (long f : flags) {
            assertEquals(1, Long.bitCount(f));
            assertEquals(0, seen & f);
            seen |= f;
        }
        assertNotEquals(ChannelLayout.FIN, ChannelLayout.CANCEL);
        assertEquals(0, ChannelLayout.HEADER % 64, "blocks stay 64-byte aligned after their header");
    }

    @Test
    void sizesWhoseWindowWouldNotFitALongAreRefused() {
        for (long block : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 319}) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> new ChannelLayout(1, block));
            assertTrue(e.getMessage().contains("channel block bytes"), e.getMessage());
        }
        long largest = Long.MAX_VALUE - 320; // the block's own sum just fits; the window's does not
        InvalidArgumentException window = assertThrows(InvalidArgumentException.class, () -> new ChannelLayout(1, largest));
        assertTrue(window.getMessage().contains("channel window size"), window.getMessage());
        InvalidArgumentException ring = assertThrows(InvalidArgumentException.class, () -> new ChannelLayout(2, 1L << 62));
        assertTrue(ring.getMessage().contains("channel slots × slot size"), ring.getMessage());
        ChannelLayout fits = new ChannelLayout(1, Long.MAX_VALUE - 320 - 128);
        assertEquals(Long.MAX_VALUE - 320 - 128, fits.blockBytes());
    }
}
