package org.jccl.rma.pairs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.launch.Launcher;

/** The two ways to run {@link EveryPairPuts}: every rank in this process, a thread each, or a process per rank. */
final class PairRanks {
    private PairRanks() {
    }

    static void inOneProcess(Backend backend, int ranks) throws Exception {
        List<Communicator> comms = backend.initAll(ranks).get(120, TimeUnit.SECONDS);
        ExecutorService threads = Executors.newFixedThreadPool(ranks);
        try {
            List<CompletableFuture<List<String>>> running = new ArrayList<>();
            for (Communicator c : comms) {
                running.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return EveryPairPuts.run(c);
                    } catch (Exception e) {
                        throw new IllegalStateException("rank " + c.rank() + " failed", e);
                    }
                }, threads));
            }
            for (int r = 0; r < ranks; r++) {
                List<String> wrong = running.get(r).get(300, TimeUnit.SECONDS);
                assertEquals(List.of(), wrong, EveryPairPuts.summary(r, ranks, wrong));
            }
        } finally {
            threads.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    static void underTheLauncher(int ranks, String backend) {
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", String.valueOf(ranks), "--", EveryPairPutsMain.class.getName(), backend),
                new PrintStream(outBytes, true, StandardCharsets.UTF_8), new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        String out = outBytes.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + errBytes.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < ranks; r++) {
            String prefix = "[rank " + r + "] rank " + r + ": ";
            assertTrue(out.lines().anyMatch(line -> line.startsWith(prefix) && line.endsWith("all right")), out);
        }
    }
}
