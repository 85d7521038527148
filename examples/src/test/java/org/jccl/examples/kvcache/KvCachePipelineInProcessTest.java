package org.jccl.examples.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The pipeline with every rank in this process (host ranks as threads, the in-process copy path): one prefill rank into
 * two decode ranks that each hold half of the heads, every byte checked on both; and a bad command line refused.
 */
class KvCachePipelineInProcessTest {
    @Test
    void onePrefillRankIntoTwoDecodeRanksEachWithHalfTheHeads() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCachePipeline.run(new String[] {"--topology", "1P2D", "--requests", "4", "--decode-block-tokens", "8"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + err.toString(StandardCharsets.UTF_8));
        assertTrue(text.contains("[rank 1] decode rank 1 on"), text);
        assertTrue(text.contains("heads 0..1"), text);
        assertTrue(text.contains("heads 2..3"), text);
        for (int decode = 1; decode <= 2; decode++) {
            assertTrue(text.contains("[rank " + decode + "] decode rank " + decode + " summary: 4 of 4 requests received"), text);
        }
        assertEquals(2, text.lines().filter(l -> l.contains("summary: 4 of 4 requests received") && l.contains(", 0 wrong bytes,"))
                .count(), text);
        assertTrue(text.contains("[rank 0] prefill rank 0 summary: 8 of 8 transfers delivered"), text);
    }

    @Test
    void aBadCommandLineIsRefusedWithTheUsage() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = KvCachePipeline.run(new String[] {"--topology", "3P3D"}, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(2, code);
        assertTrue(text.startsWith("KvCachePipeline: --topology 3P3D: one side must be a single rank"), text);
        assertTrue(text.contains("usage: KvCachePipeline"), text);
    }
}
