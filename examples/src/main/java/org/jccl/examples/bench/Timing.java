package org.jccl.examples.bench;

/**
 * One measured form (out-of-place or in-place) of one bandwidth row: nccl-tests' time, algbw, busbw and #wrong
 * ({@code wrong} is -1 when the data were not checked), and the event thread's CPU time per operation.
 */
record Timing(double micros, double algbw, double busbw, long wrong, double eventCpuNanosPerOp) {
    boolean checked() {
        return wrong >= 0;
    }
}
