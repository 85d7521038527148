package org.jccl.core.launch;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * The program the launcher tests run as each rank. Modes (first argument):
 * <ul>
 *   <li>{@code exchange}: every rank stores a greeting, meets the others at a barrier, reads every greeting, and
 *       shares a unique id made by rank 0; prints what it read.</li>
 *   <li>{@code fail R}: rank R exits with code 3 once every rank has joined; the others wait at a barrier that can
 *       never fill, until the launcher stops them.</li>
 *   <li>{@code hold}: joins and then waits (for a key nobody sets) until it is killed.</li>
 * </ul>
 */
public final class LaunchedRankMain {
    private LaunchedRankMain() {
    }

    /** Runs one rank in the mode args[0] names. */
    public static void main(String[] args) {
        String mode = args.length == 0 ? "exchange" : args[0];
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            System.out.println("joined as rank " + rank + " of " + n + " (local rank " + rdzv.localRank() + ")");
            System.out.println("listens on " + org.jccl.core.config.JcclSettings.RENDEZVOUS_BIND.value());
            System.out.println("NCCL_JCCL_LAUNCH_PROBE=" + System.getenv("NCCL_JCCL_LAUNCH_PROBE"));
            System.out.println("command line: " + ProcessHandle.current().info().commandLine().orElse("unknown"));
            switch (mode) {
                case "exchange" -> exchange(rdzv, rank, n);
                case "fail" -> {
                    rdzv.barrierNow("joined");
                    if (rank == Integer.parseInt(args[1])) {
                        System.err.println("failing on purpose");
                        System.exit(3);
                    }
                    System.out.println("waiting at a barrier that never fills");
                    rdzv.client().barrierNow("never", n + 1, Duration.ofMinutes(5));
                }
                case "hold" -> rdzv.client().getNow("never-set", Duration.ofMinutes(5));
                default -> throw new IllegalArgumentException("unknown mode " + mode);
            }
        }
    }

    private static void exchange(Rendezvous rdzv, int rank, int n) {
        rdzv.client().setNow("greeting/" + rank, ("hello from " + rank).getBytes(StandardCharsets.UTF_8));
        rdzv.barrierNow("greetings-set");
        List<String> read = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            read.add(new String(rdzv.client().getNow("greeting/" + r, Duration.ofSeconds(5)), StandardCharsets.UTF_8));
        }
        System.out.println("read " + read);
        UniqueId id = rdzv.shareUniqueIdNow("unique-id", LaunchedRankMain::madeUpId);
        System.out.println("unique id " + id.toBase64().substring(0, 12));
        rdzv.barrierNow("done");
    }

    /** Stands in for a backend's {@code newUniqueId}: only rank 0 calls it. */
    private static UniqueId madeUpId() {
        byte[] b = new byte[UniqueId.BYTES];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (i * 7 + 1);
        return UniqueId.fromBytes(b);
    }
}
