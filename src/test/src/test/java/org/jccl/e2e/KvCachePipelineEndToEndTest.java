package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jccl.core.launch.Launcher;
import org.jccl.examples.kvcache.KvCachePipeline;
import org.junit.jupiter.api.Test;

/**
 * The prefill → decode KV-cache pipeline as two processes started by jccl's launcher (host backend over TCP on a
 * machine without a GPU): every block checked byte for byte, every request completed once.
 */
class KvCachePipelineEndToEndTest {
    @Test
    void everyRequestsBlocksArriveIntactAndEachRequestCompletesOnce() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc", "2", "--", KvCachePipeline.class.getName(), "3", "5", "4", "16", "1"),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + "\n" + err.toString(StandardCharsets.UTF_8));
        assertTrue(text.contains("through a block channel (putSignal, 8 slots)"), text);
        assertTrue(text.contains("[rank 0] prefill sent 60 blocks"), text);
        assertTrue(text.contains("[rank 1] decode: 60 blocks, 0 wrong, all 3 requests complete: true"), text);
        for (int r = 0; r < 3; r++) {
            String done = "[rank 1] decode: request " + r + " complete after";
            assertEquals(1, text.lines().filter(l -> l.startsWith(done)).count(), text);
        }
    }
}
