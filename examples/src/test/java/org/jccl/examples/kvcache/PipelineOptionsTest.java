package org.jccl.examples.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPathKind;
import org.junit.jupiter.api.Test;

/** The pipeline's command line: defaults per machine, topologies and layouts, and a clear message for bad values. */
class PipelineOptionsTest {
    @Test
    void gpusGetLlama3ShapeAndTheHostASmallOne() {
        PipelineOptions gpu = PipelineOptions.parse(new String[0], true);
        assertEquals(32, gpu.layers());
        assertEquals(8, gpu.kvHeads());
        assertEquals(128, gpu.headDim());
        assertEquals(16, gpu.blockTokens());
        assertEquals(64 << 10, gpu.prefillLayout().blockBytes() * 2, "Llama-3-8B: 64 KiB of K and V per block and layer");
        PipelineOptions host = PipelineOptions.parse(new String[0], false);
        assertEquals(4, host.layers());
        assertEquals(1, host.prefills());
        assertEquals(1, host.decodes());
        assertEquals(2, host.ranks());
        assertEquals(KvPathKind.AUTO, host.path());
        assertEquals(Duration.ZERO, host.decodeHold());
        PipelineOptions small = PipelineOptions.parse(new String[] {"--model", "small"}, true);
        assertEquals(4, small.layers());
    }

    @Test
    void onePrefillRankIntoTwoDecodeRanksSplitsTheHeads() {
        PipelineOptions o = PipelineOptions.parse(new String[] {"--topology", "1p2d", "--requests", "3"}, false);
        assertEquals(3, o.ranks());
        assertTrue(o.isPrefill(0));
        assertEquals(3, o.requestsPerDecodeRank(), "every request goes to both decode ranks");
        KvLayout first = o.decodeLayout(0);
        KvLayout second = o.decodeLayout(1);
        assertEquals(2, first.kvHeads());
        assertEquals(0, first.headOffset());
        assertEquals(2, second.headOffset());
        assertEquals(4, o.prefillLayout().kvHeads());
    }

    @Test
    void twoPrefillRanksIntoOneDecodeRankShareItsPool() {
        PipelineOptions o = PipelineOptions.parse(new String[] {"--topology", "2P1D", "--requests", "5", "--batch", "2",
                "--tokens", "40-64", "--decode-block-tokens", "24", "--decode-hold-ms", "15"}, false);
        assertEquals(10, o.requestsPerDecodeRank());
        assertEquals(24, o.decodeLayout(0).tokensPerBlock());
        assertEquals(2 * 2 * 2 * 3, o.decodeLayout(0).blocks(), "2 batches of both prefill ranks, 3 blocks of 24 each");
        assertEquals(2 * 2 * 4, o.prefillLayout().blocks(), "2 batches of 4 blocks of 16");
        assertEquals(Duration.ofMillis(15), o.decodeHold());
    }

    @Test
    void badValuesAreRefusedNamingTheOption() {
        assertMessage("--topology must look like 1P1D, 2P1D or 1P2D, not 'two'", "--topology", "two");
        assertMessage("--topology 2P2D: one side must be a single rank", "--topology", "2P2D");
        assertMessage("--topology 0P1D: one side must be a single rank", "--topology", "0P1D");
        assertMessage("--requests must be 1 or more", "--requests", "0");
        assertMessage("--batch needs a whole number, not 'four'", "--batch", "four");
        assertMessage("--tokens 90-40: lengths must be at least 1 and A no more than B", "--tokens", "90-40");
        assertMessage("--tokens must be a length N or a range A-B, not '1,2'", "--tokens", "1,2");
        assertMessage("--decode-hold-ms must be 0 or more", "--decode-hold-ms", "-5");
        assertMessage("--head-dim must be even", "--head-dim", "33");
        assertMessage("3 decode ranks split the heads evenly: --kv-heads 4 is not a multiple of 3", "--topology", "1P3D");
        assertMessage("--path must be one of auto, lsa_kernel, copy, put_signal, send_recv, not 'nvlink'", "--path", "nvlink");
        assertMessage("--model must be one of llama3-8b, small, not 'gpt'", "--model", "gpt");
        assertMessage("--layers needs a value", "--layers");
        assertMessage("unknown option '--prefills'", "--prefills", "2");
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PipelineOptions.parse(args, false));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
