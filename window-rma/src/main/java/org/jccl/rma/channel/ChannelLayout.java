package org.jccl.rma.channel;

import org.jccl.core.error.Errors;

/**
 * Where a channel keeps what in its window, the same on every rank (the window is collective-symmetric):
 * {@code slots} slots of a header and one block, then the producer's closing area (the consumer's closing record
 * lands there), then the consumer's source of that record.
 *
 * <p>A header is three longs: the block's sequence number, its length in bytes, and flags ({@link #END},
 * {@link #FAILED}, {@link #CANCELLED}, {@link #ACK}). A closing record is four longs: {@link #FIN} or
 * {@link #CANCEL}, the number of waits the consumer issued, the number of credits it sent before the record, and a
 * check value, so that a record read while it lands is recognised as incomplete.
 */
record ChannelLayout(int slots, long blockBytes) {
    /** Header bytes before each block: a multiple of 64 keeps blocks aligned for the copy engines. */
    static final long HEADER = 64;
    static final long WORD = 64;
    private static final long ALIGN = 256;

    // header flags
    static final long END = 1;
    static final long FAILED = 2;
    static final long CANCELLED = 4;
    static final long ACK = 8;
    // closing record kinds
    static final long FIN = 0x46494e;
    static final long CANCEL = 0x43414e;
    static final long RECORD_BYTES = 32;

    ChannelLayout {
        // Every offset below is at most the window's size: bounding that once keeps all of them from wrapping.
        long stride = Errors.exactSum(blockBytes, HEADER + ALIGN, "channel block bytes");
        Errors.exactSum(Errors.exactProduct(slots, stride, "channel slots × slot size"), 2 * WORD, "channel window size");
    }

    long slotStride() {
        return align(HEADER + blockBytes);
    }

    long slotOffset(long sequence) {
        return (sequence % slots) * slotStride();
    }

    /** Where the consumer's closing record lands in the producer's window. */
    long closingOffset() {
        return slots * slotStride();
    }

    /** Where the consumer writes its closing record before putting it. */
    long closingSourceOffset() {
        return closingOffset() + WORD;
    }

    long windowBytes() {
        return closingSourceOffset() + WORD;
    }

    /** The check value of a closing record. */
    static long check(long kind, long waits, long credits) {
        return ~(kind * 31 + waits) * 31 + credits ^ 0x5ca1ab1eL;
    }

    private static long align(long bytes) {
        return (bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
}
