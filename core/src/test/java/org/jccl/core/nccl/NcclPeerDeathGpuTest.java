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
 * A process of an NCCL job dies during a collective: the survivor's communicator is aborted through
 * {@link org.jccl.core.PeerWatch} when the rendezvous reports the death (NCCL itself may never report it), and its
 * pending work fails with {@code RemoteErrorException} instead of hanging. Two GPUs, one JVM each, via the launcher.
 */
@Tag("gpu")
class NcclPeerDeathGpuTest {
    @Test
    void aKilledRankAbortsTheSurvivorsCommunicator() {
        assumeTrue(Jccl.isAvailable(BackendKind.NCCL) && Jccl.backend(BackendKind.NCCL).deviceCount() >= 2,
                "needs NCCL and 2 GPUs");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", "2", "--", NcclPeerDeathRankMain.class.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + "\n" + err.toString(StandardCharsets.UTF_8));
        assertTrue(text.contains("[rank 0] peer death noticed"), text);
    }
}
