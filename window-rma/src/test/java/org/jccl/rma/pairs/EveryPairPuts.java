package org.jccl.rma.pairs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Work;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;

/**
 * One-sided puts between every pair of ranks, checked from one rank: every rank puts a block to every other rank at
 * the slot named after itself, with a signal, then waits for one signal from each peer and checks every slot. Run by
 * every rank of a communicator at once, in one process or one per GPU. Two rounds, each into its own slots, so that
 * the second round's waits prove that signals are counted per peer.
 */
public final class EveryPairPuts {
    /** Ints per block: 64 KiB, more than one small-message chunk. */
    static final int BLOCK_INTS = 1 << 14;
    private static final int ROUNDS = 2;
    private static final long WAIT_SECONDS = 120;

    private EveryPairPuts() {
    }

    /** The value rank {@code from} puts into rank {@code to}'s slot in {@code round}, at element {@code i}. */
    static int value(int round, int from, int to, int i) {
        return round * 100_000_000 + from * 10_000_000 + to * 1_000_000 + i;
    }

    /** Runs both rounds on this rank; returns the first mismatches, empty when every value arrived. */
    public static List<String> run(Communicator comm) throws Exception {
        int rank = comm.rank();
        int n = comm.size();
        long block = 4L * BLOCK_INTS;
        long received = ROUNDS * n * block; // [round][sender] slots, then this rank's sources [round][receiver]
        OneSided rma = OneSided.of(comm);
        Buffer memory = rma.allocate(2 * received);
        Window window = rma.register(memory, WindowFlag.COLL_SYMMETRIC).get(WAIT_SECONDS, TimeUnit.SECONDS);
        List<String> wrong = new ArrayList<>();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                List<Work> puts = new ArrayList<>();
                List<SignalWait> waits = new ArrayList<>();
                for (int peer = 0; peer < n; peer++) {
                    if (peer == rank) continue;
                    long source = received + (round * n + peer) * block;
                    int[] data = new int[BLOCK_INTS];
                    for (int i = 0; i < BLOCK_INTS; i++) data[i] = value(round, rank, peer, i);
                    memory.write(source, data);
                    puts.add(rma.putSignal(window, memory.slice(source, block), BLOCK_INTS, DataType.INT32, peer,
                            (round * n + rank) * block));
                    waits.add(SignalWait.of(peer, 1));
                }
                rma.waitSignal(waits.toArray(SignalWait[]::new)).get(WAIT_SECONDS, TimeUnit.SECONDS);
                for (Work put : puts) put.get(WAIT_SECONDS, TimeUnit.SECONDS);
                for (int peer = 0; peer < n; peer++) {
                    if (peer == rank) continue;
                    int[] got = memory.readInts((round * n + peer) * block, BLOCK_INTS);
                    for (int i = 0, shown = 0; i < BLOCK_INTS && shown < 3; i++) {
                        int want = value(round, peer, rank, i);
                        if (got[i] != want) {
                            wrong.add("round " + round + ", from rank " + peer + ", element " + i + ": expected " + want + ", got " + got[i]);
                            shown++;
                        }
                    }
                }
            }
        } finally {
            window.closeAsync().get(WAIT_SECONDS, TimeUnit.SECONDS);
            memory.close();
        }
        return wrong;
    }

    /** One line for a log. */
    static String summary(int rank, int n, List<String> wrong) {
        return "rank " + rank + ": puts from " + (n - 1) + " peers in " + ROUNDS + " rounds, "
                + (wrong.isEmpty() ? "all right" : wrong.size() + " wrong: " + wrong);
    }
}
