package org.jccl.device;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.device.kernels.LsaAllToAll;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;

/**
 * One rank per process on its local GPU: a device communicator whose LSA team is every rank of the host, checked by
 * its team and by three rounds of the LSA all-to-all kernel between the processes. Exits 1 when anything was wrong.
 */
public final class LsaTeamMain {
    static final int BLOCK_INTS = 1 << 14;

    private LsaTeamMain() {
    }

    /** Runs one rank under jccl's launcher (or any launcher the rendezvous knows). */
    public static void main(String[] args) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        List<String> wrong = new ArrayList<>();
        int rank;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator comm = nccl.initRank(rdzv.shareUniqueIdNow("id", nccl::newUniqueId), rdzv.worldSize(), rdzv.rank(),
                     rdzv.localRank()).get(120, TimeUnit.SECONDS)) {
            rank = comm.rank();
            int n = comm.size();
            DeviceComm team = DeviceApi.of(comm).create(DeviceCommRequirements.builder().lsaBarrierCount(8).build())
                    .get(120, TimeUnit.SECONDS);
            if (team.lsaSize() != n || team.lsaRank() != rank) {
                wrong.add("LSA team " + team.lsaRank() + " of " + team.lsaSize() + ", expected " + rank + " of " + n);
            }
            long blockBytes = 4L * BLOCK_INTS;
            OneSided rma = OneSided.of(comm);
            Window send = rma.register(rma.allocate(blockBytes * n), WindowFlag.COLL_SYMMETRIC).get(120, TimeUnit.SECONDS);
            Window recv = rma.register(rma.allocate(blockBytes * n), WindowFlag.COLL_SYMMETRIC).get(120, TimeUnit.SECONDS);
            int[] data = new int[BLOCK_INTS * n];
            for (int p = 0; p < n; p++) for (int i = 0; i < BLOCK_INTS; i++) data[p * BLOCK_INTS + i] = rank * 1_000_000 + p * 100_000 + i;
            send.buffer().write(0, data);
            for (int round = 0; round < 3; round++) {
                LsaAllToAll.of(team).run(send, 0, recv, 0, blockBytes).get(120, TimeUnit.SECONDS);
                int[] got = recv.buffer().readInts(0, BLOCK_INTS * n);
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < BLOCK_INTS; i++) {
                        int want = p * 1_000_000 + rank * 100_000 + i;
                        if (got[p * BLOCK_INTS + i] != want && wrong.size() < 5) {
                            wrong.add("round " + round + " block from " + p + " element " + i + ": expected " + want + ", got " + got[p * BLOCK_INTS + i]);
                        }
                    }
                }
            }
            OneSided.closeAll(List.of(send, recv)).get(120, TimeUnit.SECONDS);
            send.buffer().close();
            recv.buffer().close();
            team.closeAsync().get(120, TimeUnit.SECONDS);
        }
        System.out.println("rank " + rank + ": LSA team and all-to-all " + (wrong.isEmpty() ? "all right" : "wrong: " + wrong));
        System.exit(wrong.isEmpty() ? 0 : 1);
    }
}
