package org.jccl.core.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.TestAccess;
import org.jccl.core.Work;
import org.jccl.core.jfr.JfrSettings;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * jccl's CPU path of one operation, without a GPU: an 8-byte all-reduce on a driver whose events are complete when
 * recorded ({@link InstantDriver}), so what is timed is validation, admission, the hand-off to the communicator's
 * launch thread, the event recorded and tracked, the event thread seeing it and completing the {@link Work}, and the
 * caller seeing that. On a GPU the same path runs around the library's enqueue and the GPU's own time.
 * {@link #afterPause} times the same round trip once the engine's threads have gone to sleep: what waking them costs.
 * Each runs without a JFR recording and with jccl's ({@link #jfr}): what a disabled and an enabled event cost.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class IssuePathBenchmark {
    /** Operations in flight in {@link #pipelined}, as Bench's pipeline mode keeps by default. */
    static final int IN_FLIGHT = 64;
    private static final long RECORDING_BYTES = 64L << 20;

    /**
     * {@code off}: no recording (jccl's JFR events disabled, as in a service that records nothing); {@code jccl}: a
     * recording with {@code jccl.jfc}, so that every operation is an event.
     */
    @Param({"off", "jccl"})
    public String jfr;

    private Backend backend;
    private Communicator comm;
    private Buffer buffer;
    private @Nullable Recording recording;
    private final Work[] window = new Work[IN_FLIGHT];

    @Setup(Level.Trial)
    public void open() {
        if (jfr.equals("jccl")) {
            recording = new Recording(JfrSettings.configuration());
            recording.setMaxSize(RECORDING_BYTES); // disk chunks, oldest dropped: a trial writes millions of events
            recording.start();
        }
        backend = TestAccess.backend(new InstantDriver());
        comm = backend.initAll(1).join().get(0);
        buffer = backend.allocate(-1, 8);
    }

    @TearDown(Level.Trial)
    public void close() {
        comm.close();
        buffer.close();
        if (recording != null) recording.close();
    }

    /** Issue to completion seen by the caller, one operation at a time; the caller spins as Bench's latency mode. */
    @Benchmark
    public Work roundTrip() {
        Work w = comm.allReduce(buffer, buffer, 2, DataType.FLOAT32, ReduceOp.SUM);
        spinUntilDone(w);
        return w;
    }

    /** Sleeps past the engine threads' spinning and yielding (1 ms) before each call, so that they are parked. */
    @State(Scope.Thread)
    public static class Pause {
        @Setup(Level.Invocation)
        public void sleep() throws InterruptedException {
            Thread.sleep(3);
        }
    }

    /** One round trip after a pause, as in a server whose requests arrive now and then: what waking the threads costs. */
    @Benchmark
    public Work afterPause(Pause pause) {
        return roundTrip();
    }

    /** {@value #IN_FLIGHT} operations issued back to back, then the caller waits for the last: time per operation. */
    @Benchmark
    @OperationsPerInvocation(IN_FLIGHT)
    public Work pipelined() {
        for (int i = 0; i < IN_FLIGHT; i++) window[i] = comm.allReduce(buffer, buffer, 2, DataType.FLOAT32, ReduceOp.SUM);
        Work last = window[IN_FLIGHT - 1];
        spinUntilDone(last); // a stream completes in order: the last done means all done
        return last;
    }

    private static void spinUntilDone(CompletableFuture<?> w) {
        while (!w.isDone()) Thread.onSpinWait();
        w.join();
    }
}
