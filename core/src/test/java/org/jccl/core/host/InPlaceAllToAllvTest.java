package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * allToAllv in place (send == recv), as RCCL allows it: every rank's blocks arrive although each rank overwrites
 * the very memory its peers read from, in one JVM and over the network transport; a partial overlap is refused.
 */
class InPlaceAllToAllvTest {
    private static final int RANKS = 3;
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    @Test
    void inPlaceInOneJvm() throws Exception {
        List<Communicator> comms = host().initAll(RANKS).get(30, TimeUnit.SECONDS);
        opened.addAll(comms);
        exchangeInPlace(comms);
    }

    @Test
    void inPlaceOverTheNetworkTransport() throws Exception {
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < RANKS; r++) joining.add(host().initRank(id, RANKS, r, -1));
        List<Communicator> comms = new ArrayList<>();
        for (CompletableFuture<Communicator> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        opened.addAll(comms);
        exchangeInPlace(comms);
    }

    @Test
    void aPartialOverlapIsRefusedBeforeAnythingIsIssued() throws Exception {
        Communicator c = host().initAll(1).get(30, TimeUnit.SECONDS).get(0);
        opened.add(c);
        Buffer b = host().allocate(-1, 64);
        opened.add(b);
        long[] one = {2};
        long[] zero = {0};
        assertThrows(InvalidArgumentException.class,
                () -> c.allToAllv(b, one, zero, b.slice(8, 16), one, zero, DataType.INT32));
    }

    /**
     * Rank r sends {@code r + j + 1} elements to rank j, all its blocks packed from element 0, and receives into
     * the same buffer, blocks packed in rank order: the layouts differ, so a rank overwrites elements it still sends.
     */
    private void exchangeInPlace(List<Communicator> comms) throws Exception {
        int n = comms.size();
        List<Buffer> buffers = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            int r = c.rank();
            long[] sendCounts = new long[n];
            long[] sendDispl = new long[n];
            long[] recvCounts = new long[n];
            long[] recvDispl = new long[n];
            long sent = 0;
            long received = 0;
            for (int j = n - 1; j >= 0; j--) { // blocks to higher ranks first: a layout unlike the receive side's
                sendCounts[j] = r + j + 1;
                sendDispl[j] = sent;
                sent += sendCounts[j];
            }
            for (int j = 0; j < n; j++) {
                recvCounts[j] = j + r + 1;
                recvDispl[j] = received;
                received += recvCounts[j];
            }
            int[] data = new int[(int) Math.max(sent, received)];
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < sendCounts[j]; k++) data[(int) sendDispl[j] + k] = code(r, j, k);
            }
            Buffer b = host().allocate(-1, 4L * data.length);
            b.write(0, data);
            buffers.add(b);
            opened.add(b);
            works.add(c.allToAllv(b, sendCounts, sendDispl, b, recvCounts, recvDispl, DataType.INT32));
        }
        for (Work w : works) w.get(30, TimeUnit.SECONDS);
        for (Communicator c : comms) {
            int r = c.rank();
            List<Integer> expected = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < j + r + 1; k++) expected.add(code(j, r, k));
            }
            int[] got = buffers.get(r).readInts(0, expected.size());
            assertArrayEquals(expected.stream().mapToInt(Integer::intValue).toArray(), got, "rank " + r);
        }
    }

    /** Element k of the block rank {@code from} sends to rank {@code to}. */
    private static int code(int from, int to, int k) {
        return 1_000_000 * (from + 1) + 1000 * to + k;
    }
}
