package org.jccl.core.ranks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;

/** Runs {@link EveryRankChecks} for every rank of one process at once, a thread per rank (a rank's calls wait). */
final class RanksInOneProcess {
    private RanksInOneProcess() {
    }

    static List<EveryRankChecks.Result> run(Backend backend, int ranks, boolean shrink) throws Exception {
        List<Communicator> comms = backend.initAll(ranks).get(120, TimeUnit.SECONDS);
        ExecutorService threads = Executors.newFixedThreadPool(ranks);
        try {
            List<CompletableFuture<EveryRankChecks.Result>> running = new ArrayList<>();
            for (Communicator c : comms) {
                running.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return EveryRankChecks.run(backend, c, shrink);
                    } catch (Exception e) {
                        throw new IllegalStateException("rank " + c.rank() + " failed", e);
                    }
                }, threads));
            }
            List<EveryRankChecks.Result> results = new ArrayList<>();
            for (CompletableFuture<EveryRankChecks.Result> r : running) results.add(r.get(600, TimeUnit.SECONDS));
            return results;
        } finally {
            threads.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }
}
