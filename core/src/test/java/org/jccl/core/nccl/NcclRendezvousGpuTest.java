package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.jccl.core.launch.Launcher;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two JVMs, one per GPU, started by jccl's launcher, form one NCCL communicator through the Netty rendezvous (rank 0
 * makes the unique id, the store carries it) and run every collective with checked results.
 */
@Tag("gpu")
class NcclRendezvousGpuTest {
    @Test
    void oneProcessPerGpuJoinsThroughTheRendezvous() {
        assumeTrue(Jccl.isAvailable(BackendKind.NCCL) && Jccl.backend(BackendKind.NCCL).deviceCount() >= 2,
                "needs NCCL and 2 GPUs (one process each)");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", "2", "--", NcclRendezvousRankMain.class.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + "\n" + err.toString(StandardCharsets.UTF_8));
        // 2 types x (2 reductions x 2 reducing collectives + broadcast, allGather, allToAll, send/recv) = 16 checks
        assertTrue(text.contains("[rank 0] checks passed: 16"), text);
        assertTrue(text.contains("[rank 1] checks passed: 16"), text);
    }
}
