package org.jccl.examples.bench;

import java.io.PrintStream;

/**
 * Where results go: nccl-tests' table ({@link TextReport}) or one JSON object per result ({@link JsonReport}), on
 * stdout; progress goes to stderr, never here.
 */
interface Report {
    /**
     * @param nameOperations whether several operations are measured, so every bandwidth row names its operation
     */
    static Report to(PrintStream out, boolean json, boolean nameOperations) {
        return json ? new JsonReport(out) : new TextReport(out, nameOperations);
    }

    void header(String title, String mode);

    void bandwidth(BandwidthRow row);

    /** After the last bandwidth row: nccl-tests' summary lines. */
    void bandwidthFooter();

    void latency(BenchOp op, String path, long bytes, int samples, double p50, double p99, double p999, double mean,
                 double eventCpuNanosPerOp);

    void pipeline(BenchOp op, String path, long bytes, int inFlight, long ops, double seconds, double eventCpuNanosPerOp);

    /**
     * Idle mode: the event thread's CPU time and state, and the CPU time of every jccl thread of the process
     * (launch, stream, event, network: {@code jcclThreads} of them), over {@code seconds} with nothing pending.
     */
    void idle(double seconds, double cpuMicros, String threadState, double jcclCpuMicros, int jcclThreads);
}
