package org.jccl.core.host;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.spi.DriverConstants;
import org.jspecify.annotations.Nullable;

/**
 * {@code ncclCommSplit} for a communicator whose ranks are in several processes, on the launch thread: the ranks
 * exchange (color, key) over the clique's control lane; each color's first member (by key, then rank) makes a new
 * unique id, whose root is in its process, and sends it to the other members; every member then joins the new
 * communicator with that id, as {@code initRank} does (threads of one JVM still end up sharing memory).
 */
final class NetworkSplit {
    private static final SecureRandom RANDOM = new SecureRandom();

    private NetworkSplit() {
    }

    static @Nullable HostComm split(NetworkClique clique, int rank, int color, int key) {
        int n = clique.size();
        byte[] mine = ByteBuffer.allocate(16).putLong(color).putLong(key).array();
        for (int k = 1; k < n; k++) clique.sendControl((rank + k) % n, mine);
        long[][] all = new long[n][];
        all[rank] = new long[] {color, key};
        for (int k = 1; k < n; k++) {
            int j = (rank - k + n) % n;
            ByteBuffer b = ByteBuffer.wrap(clique.receiveControl(j, 16));
            all[j] = new long[] {b.getLong(), b.getLong()};
        }
        if (color == DriverConstants.SPLIT_NO_COLOR) return null;
        List<long[]> members = new ArrayList<>();
        for (int r = 0; r < n; r++) if (all[r][0] == color) members.add(new long[] {all[r][1], r});
        members.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int leader = (int) members.get(0)[1];
        int newRank = 0;
        while (members.get(newRank)[1] != rank) newRank++;
        byte[] id;
        if (rank == leader) {
            id = HostDriver.newUniqueId(RANDOM, true);
            for (long[] m : members) if (m[1] != rank) clique.sendControl((int) m[1], id);
        } else {
            id = clique.receiveControl(leader, org.jccl.core.UniqueId.BYTES);
        }
        return HostDriver.join(members.size(), id, newRank);
    }
}
