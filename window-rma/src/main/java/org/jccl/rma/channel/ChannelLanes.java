package org.jccl.rma.channel;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jccl.core.Communicator;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.OneSidedLimits;
import org.jspecify.annotations.Nullable;

/**
 * The signal lanes of a communicator's block channels on this rank.
 *
 * <p>A lane is one (signal index, context) pair. Signals are counted per (peer, signal index, context), and a channel
 * consumes exactly the signals it expects: two channels between the same two ranks (either direction, or one rank
 * into itself twice) on one lane would consume each other's signals. So every channel takes a lane of its own among
 * the channels between its two ranks: the lowest free one of the {@code signal indices × contexts} the library
 * accepts (the host backend 4 × 2, NCCL 2.29 only 1 × 1). Opening one more than that is refused, typed, before
 * anything is made. Channels between other pairs of ranks never meet on a counter and may share lanes.
 *
 * <p>Every rank opens and closes every channel (the window is collective) in the same order, so every rank takes
 * and frees the same lanes without talking to the others: a lane is taken when a channel is opened and free again
 * when its close is called. {@link CommunicatorChannels} makes a channel opened after a close begin once that close
 * completed, so a freed lane carries nothing of its last channel when the next one uses it.
 */
final class ChannelLanes {
    /** One (signal index, context) pair, held by one channel among those between its two ranks. */
    record Lane(long pair, int number, int signalIndex, int context) {
    }

    /** Per pair of ranks, which channel holds which lane (null where free). */
    private final Map<Long, @Nullable String[]> held = new HashMap<>();

    /**
     * Takes the lowest lane free between {@code producer} and {@code consumer} for the channel {@code what}.
     *
     * @throws InvalidUsageException if every lane the library offers between them is held
     */
    synchronized Lane take(Communicator communicator, OneSidedLimits limits, int producer, int consumer, String what) {
        int lanes = limits.signalIndices() * limits.contexts();
        long pair = (long) Math.min(producer, consumer) << 32 | Math.max(producer, consumer);
        @Nullable String[] holders = held.computeIfAbsent(pair, p -> new String[lanes]);
        for (int n = 0; n < holders.length; n++) {
            if (holders[n] == null) {
                holders[n] = what;
                return new Lane(pair, n, n % limits.signalIndices(), n / limits.signalIndices());
            }
        }
        List<String> holding = new ArrayList<>();
        for (String h : holders) holding.add(h);
        throw new InvalidUsageException(what + " cannot open on " + communicator.describe() + ": a channel needs a"
                + " signal lane (signal index, context) of its own among the channels between ranks " + producer + " and "
                + consumer + ", and " + communicator.backend().describe() + " accepts " + limits.signalIndices()
                + " signal index(es) × " + limits.contexts() + " context(s) = " + lanes + " lane(s), all held by "
                + holding + ". Close one of them first, or open this channel on a communicator of its own"
                + " (Communicator.split)");
    }

    /** Frees {@code lane}: its channel's close was called. */
    synchronized void release(Lane lane) {
        @Nullable String[] holders = held.get(lane.pair());
        if (holders != null) holders[lane.number()] = null;
    }
}
