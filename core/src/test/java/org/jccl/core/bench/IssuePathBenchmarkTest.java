package org.jccl.core.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link IssuePathBenchmark} so that every build exercises it: briefly by default, a smoke check that it runs
 * and completes every operation (never a timed assertion); with {@code -Djccl.bench=full} long enough for figures:
 * {@code mvn -B -q -pl core -am test -Dtest=IssuePathBenchmarkTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Djccl.bench=full} (with the bytes allocated per operation, each benchmark without a JFR recording and with jccl's;
 * {@code -Djccl.bench.jfr=off} or {@code =jccl} runs one), results in {@code core/target/surefire-reports/org.jccl.core.bench.IssuePathBenchmarkTest-output.txt}.
 */
class IssuePathBenchmarkTest {
    @Test
    void everyBenchmarkRunsAndReportsATimePerOperation() throws Exception {
        boolean full = "full".equals(System.getProperty("jccl.bench"));
        OptionsBuilder builder = new OptionsBuilder();
        if (full) builder.addProfiler(GCProfiler.class); // bytes allocated per operation: what feeds the collector
        // A brief run skips the recording (FlightRecorderEventsTest checks the events); -Djccl.bench.jfr picks.
        String jfr = System.getProperty("jccl.bench.jfr", full ? "off,jccl" : "off");
        Options options = builder
                .include(IssuePathBenchmark.class.getName())
                .param("jfr", jfr.split(","))
                .forks(0) // in this JVM: surefire's class path is a manifest jar a forked JVM would not read
                .threads(1)
                .warmupIterations(full ? 5 : 1)
                .warmupTime(TimeValue.milliseconds(full ? 1000 : 100))
                .measurementIterations(full ? 10 : 2)
                .measurementTime(TimeValue.milliseconds(full ? 1000 : 100))
                .timeUnit(TimeUnit.MICROSECONDS)
                .build();
        Collection<RunResult> results = new Runner(options).run();
        assertEquals(5 * jfr.split(",").length, results.size(),
                "roundTrip, afterPause, pipelined, replayed and replayedPipelined ran with each recording");
        for (RunResult r : results) {
            double score = r.getPrimaryResult().getScore();
            assertTrue(Double.isFinite(score) && score > 0, r.getParams().getBenchmark() + " measured " + score);
            assertTrue(r.getPrimaryResult().getSampleCount() > 0, r.getParams().getBenchmark() + " took samples");
        }
    }
}
