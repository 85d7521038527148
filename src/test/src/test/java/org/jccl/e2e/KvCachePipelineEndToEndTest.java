package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.core.launch.Launcher;
import org.jccl.examples.kvcache.KvCachePipeline;
import org.junit.jupiter.api.Test;

/**
 * The prefill → decode KV-cache pipeline under jccl's launcher, one process per rank (host backend over TCP on a
 * machine without a GPU, the small model): every request reaches its decode rank once, every byte of it checked
 * against the pattern prefill wrote, none wrong.
 */
class KvCachePipelineEndToEndTest {
    private static final Pattern MOST_WAITED = Pattern.compile("waited for decode blocks [0-9.]+ ms in all, ([0-9.]+) ms at most");

    @Test
    void onePrefillRankIntoOneDecodeRankThatHoldsItsBlocksBackpressuresPrefill() {
        // Prompts of one length and a decode pool of one of them: each request is granted only once decode freed the one
        // before, at least 30 ms after it arrived, so prefill waits that long for blocks.
        String out = launch(2, "--topology", "1P1D", "--requests", "5", "--tokens", "100", "--decode-capacity", "1",
                "--decode-hold-ms", "30");
        assertEveryRequestIntact(out, 1, 0, 5);
        assertTrue(out.contains("[rank 0] prefill rank 0 summary: 5 of 5 transfers delivered"), out);
        Matcher waited = MOST_WAITED.matcher(out);
        assertTrue(waited.find(), out);
        assertTrue(Double.parseDouble(waited.group(1)) >= 30, "prefill waited for a slower decode: " + waited.group(0));
    }

    @Test
    void twoPrefillRanksIntoOneDecodeRank() {
        String out = launch(3, "--topology", "2P1D", "--requests", "4");
        assertEveryRequestIntact(out, 2, 0, 8);
        assertTrue(out.contains("[rank 0] prefill rank 0 summary: 4 of 4 transfers delivered"), out);
        assertTrue(out.contains("[rank 1] prefill rank 1 summary: 4 of 4 transfers delivered"), out);
    }

    @Test
    void decodeBlocksOfOtherSizeThanPrefills() {
        String out = launch(2, "--requests", "5", "--block-tokens", "16", "--decode-block-tokens", "24");
        assertTrue(out.contains("16-token blocks on prefill, 24 on decode"), out);
        assertEveryRequestIntact(out, 1, 0, 5);
    }

    /** Each request {@code first..first+count-1} arrived once at {@code decodeRank} with no wrong byte. */
    private static void assertEveryRequestIntact(String out, int decodeRank, int first, int count) {
        String prefix = "[rank " + decodeRank + "] ";
        assertTrue(out.contains(prefix + "decode rank " + decodeRank + " summary: " + count + " of " + count
                + " requests received"), out);
        assertTrue(out.contains(", 0 wrong bytes, 0 failed;"), out);
        for (int r = first; r < first + count; r++) {
            String arrived = prefix + "req-" + r + " <- rank ";
            List<String> lines = new ArrayList<>(out.lines().filter(l -> l.startsWith(arrived)).toList());
            assertEquals(1, lines.size(), out);
            assertTrue(lines.get(0).endsWith(", 0 wrong bytes"), lines.get(0));
        }
    }

    private static String launch(int nproc, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> command = new ArrayList<>(List.of("--nproc", Integer.toString(nproc), "--", KvCachePipeline.class.getName()));
        command.addAll(List.of(args));
        int code = Launcher.run(command, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> text + "\n" + err.toString(StandardCharsets.UTF_8));
        return text;
    }
}
