package org.jccl.rma.channel;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.Buffer;

/**
 * A block the consumer received: a view of its slot in the consumer's window. Its data is visible to work issued
 * on the communicator after it was emitted (and to host reads). {@link #release()} hands the slot back to the
 * producer once the work that reads it has been issued on the communicator: the credit is sent after that work, in
 * stream order, so the producer never overwrites data still being read.
 */
public final class ReceivedBlock {
    private final long sequence;
    private final Buffer data;
    private final Consumer owner;
    private final AtomicBoolean released = new AtomicBoolean();

    ReceivedBlock(long sequence, Buffer data, Consumer owner) {
        this.sequence = sequence;
        this.data = data;
        this.owner = owner;
    }

    /** The block's position in the channel: 0, 1, 2, ... in the order the producer sent them. */
    public long sequence() {
        return sequence;
    }

    /** The block's bytes in the consumer's window (valid until released). */
    public Buffer data() {
        return data;
    }

    /** Hands the slot back; idempotent. Blocks are credited back in sequence order. */
    public void release() {
        if (released.compareAndSet(false, true)) owner.release(sequence);
    }

    @Override
    public String toString() {
        return "ReceivedBlock[" + sequence + ", " + data.byteSize() + " bytes]";
    }
}
