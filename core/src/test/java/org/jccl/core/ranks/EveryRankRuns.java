package org.jccl.core.ranks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.launch.LaunchedRanks;

/** The two ways to run {@link EveryRankChecks}: every rank in this process, a thread each, or a process per rank. */
final class EveryRankRuns {
    private EveryRankRuns() {
    }

    /** Runs every rank here at once (a rank's calls wait, so a thread each) and asserts every value was right. */
    static void inOneProcess(Backend backend, int ranks, boolean shrink) throws Exception {
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
            for (int r = 0; r < ranks; r++) {
                EveryRankChecks.Result result = running.get(r).get(600, TimeUnit.SECONDS);
                assertEquals(List.of(), result.wrong(), result.summary(r));
                assertTrue(result.checked() > ranks * EveryRankChecks.COUNT, result.summary(r));
            }
        } finally {
            threads.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    /** Runs {@link EveryRankMain} in {@code ranks} processes under jccl's launcher and asserts each rank's summary. */
    static void underTheLauncher(int ranks, String backend) {
        LaunchedRanks.assertEveryRankSays(ranks, "values checked, all right", EveryRankMain.class.getName(), backend);
    }
}
