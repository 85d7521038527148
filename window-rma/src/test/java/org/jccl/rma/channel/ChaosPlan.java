package org.jccl.rma.channel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * One round of {@link ChannelChaosTest}, drawn from a seed: the ranks, the channels with their sizes, paces and
 * faults, the moment each rank closes everything, the rank killed (its communicators aborted) and when, and the
 * script of raw one-sided puts and waits on a communicator of their own.
 *
 * <p>The channels respect the rules every user must ({@code docs/guides/one-sided-and-channel.md}, "The block
 * channel"): the channels between different ranks form a forest — at most one between two ranks, none around a cycle
 * of ranks, whichever way each one points (credits flow back) — and a rank streams into itself any number of times.
 * Every rank closes every channel in the same order; only the moment differs.
 */
record ChaosPlan(long seed, int ranks, List<Channel> channels, long[] closeAfter, int victim, long killAfter,
                 OneSided oneSided) {

    enum Pace {
        FAST, SLOW
    }

    enum ProducerFault {
        /** sends every block */
        NONE,
        /** upstream fails after {@code producerFaultAt} blocks */
        UPSTREAM_FAILS,
        /** the send's result is cancelled after {@code producerFaultAt} blocks */
        CANCELS
    }

    enum ConsumerFault {
        /** releases every block */
        NONE,
        /** cancels after {@code consumerFaultAt} blocks */
        CANCELS,
        /** stops releasing after {@code consumerFaultAt} blocks: its rank closes once the ring is full */
        HOLDS
    }

    record Channel(int index, int producer, int consumer, int slots, int blockBytes, int blocks, Pace producerPace,
                   Pace consumerPace, ProducerFault producerFault, int producerFaultAt, ConsumerFault consumerFault,
                   int consumerFaultAt) {
        @Override
        public String toString() {
            return "#" + index + " " + producer + "->" + consumer + " " + slots + "x" + blockBytes + "B " + blocks
                    + " blocks, producer " + producerPace + "/" + producerFault + "@" + producerFaultAt + ", consumer "
                    + consumerPace + "/" + consumerFault + "@" + consumerFaultAt;
        }
    }

    /** Raw puts and waits: {@code steps} in one order every rank follows, the window closed at step {@code closeAt}. */
    record OneSided(List<Step> steps, int closeAt, int cancelAt) {
    }

    /**
     * Step {@code s}: {@code from} puts {@code bytes} into {@code to}'s window, region {@code s} (its own, so no later
     * put overwrites it before it is checked), signalling (index, context).
     */
    record Step(int from, int to, int bytes, int signalIndex, int context) {
    }

    static final long NEVER = Long.MAX_VALUE;
    /** Two halves of 30 regions: the targets, and each step's source on its putting rank. */
    static final int WINDOW_BYTES = 2 * 32 * OneSidedChaos.REGION;

    static ChaosPlan draw(long seed) {
        Random r = new Random(seed);
        int ranks = 1 + r.nextInt(3);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < ranks; i++) order.add(i);
        Collections.shuffle(order, r);
        // A random forest: each rank but the first joins at most one rank before it, either way round.
        List<int[]> edges = new ArrayList<>();
        for (int i = 1; i < ranks; i++) {
            if (r.nextInt(4) == 0) continue;
            int a = order.get(i);
            int b = order.get(r.nextInt(i));
            edges.add(r.nextBoolean() ? new int[] {a, b} : new int[] {b, a});
        }
        int selfChannels = r.nextInt(ranks == 1 ? 4 : 3);
        for (int i = 0; i < selfChannels; i++) {
            int rank = r.nextInt(ranks);
            edges.add(new int[] {rank, rank});
        }
        if (edges.isEmpty()) edges.add(new int[] {0, ranks - 1});
        Collections.shuffle(edges, r);
        List<Channel> channels = new ArrayList<>();
        long[] work = new long[ranks];
        for (int[] e : edges) {
            int blocks = r.nextInt(60);
            channels.add(new Channel(channels.size(), e[0], e[1], 1 + r.nextInt(5), new int[] {64, 600, 4096}[r.nextInt(3)],
                    blocks, pace(r), pace(r), ProducerFault.values()[r.nextInt(5) < 3 ? 0 : 1 + r.nextInt(2)],
                    r.nextInt(blocks + 1), ConsumerFault.values()[r.nextInt(5) < 3 ? 0 : 1 + r.nextInt(2)],
                    r.nextInt(blocks + 1)));
            work[e[0]] += blocks;
            work[e[1]] += blocks;
        }
        long[] closeAfter = new long[ranks];
        for (int i = 0; i < ranks; i++) closeAfter[i] = r.nextInt(3) == 0 ? r.nextLong(work[i] + 1) : NEVER;
        int victim = ranks > 1 && r.nextInt(4) == 0 ? r.nextInt(ranks) : -1;
        long killAfter = victim < 0 ? NEVER : r.nextLong(work[victim] + 1);
        return new ChaosPlan(seed, ranks, channels, closeAfter, victim, killAfter, oneSided(r, ranks));
    }

    private static Pace pace(Random r) {
        return r.nextInt(3) == 0 ? Pace.SLOW : Pace.FAST;
    }

    private static OneSided oneSided(Random r, int ranks) {
        List<Step> steps = new ArrayList<>();
        int n = r.nextInt(31);
        for (int i = 0; i < n; i++) {
            steps.add(new Step(r.nextInt(ranks), r.nextInt(ranks), 8 * (1 + r.nextInt(OneSidedChaos.REGION / 8)),
                    r.nextInt(4), r.nextInt(2)));
        }
        return new OneSided(steps, r.nextInt(2) == 0 ? r.nextInt(n + 1) : n, r.nextInt(3) == 0 ? r.nextInt(n + 1) : -1);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("seed " + seed + ": " + ranks + " rank(s)");
        for (Channel c : channels) b.append("\n    channel ").append(c);
        b.append("\n    close after (blocks per rank): ").append(Arrays.toString(closeAfter));
        b.append("\n    ").append(victim < 0 ? "no kill" : "kill rank " + victim + " after " + killAfter + " blocks");
        b.append("\n    one-sided: ").append(oneSided.steps().size()).append(" steps, window closed at ")
                .append(oneSided.closeAt()).append(", a wait cancelled at ").append(oneSided.cancelAt());
        return b.toString();
    }
}
