package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which forms are measured: both by default (nccl-tests), one when asked; latency and pipeline take one. Pauses. */
class BenchOptionsTest {
    @Test
    void bandwidthMeasuresBothFormsUnlessOneIsAskedFor() {
        BenchOptions both = BenchOptions.parse(new String[0]);
        assertTrue(both.outOfPlace() && both.inPlace());
        assertEquals("out-of-place and in-place", both.formsMeasured());
        BenchOptions in = BenchOptions.parse(new String[] {"--in-place"});
        assertTrue(in.inPlace() && !in.outOfPlace());
        BenchOptions out = BenchOptions.parse(new String[] {"--out-of-place"});
        assertTrue(out.outOfPlace() && !out.inPlace());
    }

    @Test
    void latencyAndPipelineMeasureOutOfPlaceUnlessInPlaceIsAskedFor() {
        BenchOptions latency = BenchOptions.parse(new String[] {"--mode", "latency"});
        assertFalse(latency.singleFormInPlace());
        assertEquals("out-of-place", latency.formsMeasured());
        BenchOptions inPlace = BenchOptions.parse(new String[] {"--mode", "pipeline", "--in-place"});
        assertTrue(inPlace.singleFormInPlace());
        assertEquals("in-place", inPlace.formsMeasured());
    }

    @Test
    void bandwidthWarmsTheCompilerUnlessToldNotTo() {
        assertEquals(20_000, BenchOptions.parse(new String[0]).compileWarmup());
        assertEquals(0, BenchOptions.parse(new String[] {"--compile-warmup", "0"}).compileWarmup());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BenchOptions.parse(new String[] {"--compile-warmup", "-5"}));
        assertEquals("--compile-warmup must not be negative", e.getMessage());
    }

    @Test
    void latencySamplesFollowEachOtherUnlessAPauseIsAskedFor() {
        assertEquals(0, BenchOptions.parse(new String[] {"--mode", "latency"}).pauseMicros());
        assertEquals(5000, BenchOptions.parse(new String[] {"--mode", "latency", "--pause-us", "5000"}).pauseMicros());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BenchOptions.parse(new String[] {"--pause-us", "-1"}));
        assertEquals("--pause-us must not be negative", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[] {"--pause-us", "10"}));
        assertEquals("--pause-us needs --mode latency", e.getMessage());
    }
}
