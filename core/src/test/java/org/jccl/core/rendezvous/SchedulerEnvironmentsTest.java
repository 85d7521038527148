package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The same two-process program ({@link SchedulerRankMain}) under each launcher's variables, nothing else set. */
class SchedulerEnvironmentsTest {
    private static final String SECRET = "scheduler-environments-test-secret-0123";

    /** What each launcher sets for rank {@code r} of two, the master on loopback (rank 0 hosts the store). */
    enum Launch {
        TORCHRUN((r, port) -> Map.of("RANK", "" + r, "WORLD_SIZE", "2", "LOCAL_RANK", "" + r,
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", port)),
        SLURM((r, port) -> Map.of("SLURM_PROCID", "" + r, "SLURM_NTASKS", "2", "SLURM_LOCALID", "" + r,
                "SLURM_STEP_NODELIST", "127.0.0.[1-2]", "JCCL_MASTER_PORT", port)),
        OPEN_MPI((r, port) -> Map.of("OMPI_COMM_WORLD_RANK", "" + r, "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_COMM_WORLD_LOCAL_RANK", "" + r, "JCCL_MASTER_PORT", port)),
        KUBERNETES((r, port) -> Map.of("JOB_COMPLETION_INDEX", "" + r, "WORLD_SIZE", "2", "HOSTNAME", "job-" + r,
                "MASTER_ADDR", "127.0.0.1", "JCCL_MASTER_PORT", port));

        final BiFunction<Integer, String, Map<String, String>> variables;

        Launch(BiFunction<Integer, String, Map<String, String>> variables) {
            this.variables = variables;
        }
    }

    @ParameterizedTest
    @EnumSource(Launch.class)
    void theSameProgramRunsUnderEachLaunchersVariables(Launch launch) throws Exception {
        String port = Integer.toString(freePort());
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) ranks.add(start(launch.variables.apply(r, port)));
            for (int r = 0; r < 2; r++) {
                Process p = ranks.get(r);
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), launch + " rank " + r + " did not finish");
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.exitValue(), out);
                // Kubernetes gives one pod per rank, so every local rank is 0.
                int local = launch == Launch.KUBERNETES ? 0 : r;
                assertTrue(out.contains(launch + ": rank " + r + " of 2 (local rank " + local + ") sum 3"), out);
            }
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
    }

    private static Process start(Map<String, String> variables) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SchedulerRankMain.class.getName());
        Map<String, String> env = pb.environment();
        // Only the variables under test: none inherited from whatever runs the build.
        env.keySet().removeIf(k -> k.startsWith("JCCL_") || k.startsWith("SLURM_") || k.startsWith("OMPI_")
                || List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "JOB_COMPLETION_INDEX")
                .contains(k));
        env.putAll(variables);
        env.put("JCCL_RENDEZVOUS_SECRET", SECRET);
        pb.redirectErrorStream(true);
        return pb.start();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
