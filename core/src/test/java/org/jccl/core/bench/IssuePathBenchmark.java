package org.jccl.core.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Completion;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Step;
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
 * {@link #replayed} and {@link #replayedPipelined} issue the same operation as a step replayed with a {@link Completion}:
 * the path that allocates nothing. Each runs without a JFR recording and with jccl's ({@link #jfr}): what a disabled and
 * an enabled event cost (with a recording, a replay goes through a {@link Work}).
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
    private Step step;
    private final Completions completions = new Completions();

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
        step = Step.builder(comm).add(Operation.allReduce(buffer, buffer, 2, DataType.FLOAT32, ReduceOp.SUM)).build().join();
    }

    @TearDown(Level.Trial)
    public void close() {
        step.close();
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

    /** {@link #roundTrip} as a step's replay told to a {@link Completion}: no future, nothing allocated. */
    @Benchmark
    public long replayed() {
        long target = completions.done() + 1;
        step.replay(completions);
        completions.spinUntil(target);
        return target;
    }

    /** {@link #pipelined} as replays told to a {@link Completion}. */
    @Benchmark
    @OperationsPerInvocation(IN_FLIGHT)
    public long replayedPipelined() {
        long target = completions.done() + IN_FLIGHT;
        for (int i = 0; i < IN_FLIGHT; i++) step.replay(completions);
        completions.spinUntil(target);
        return target;
    }

    /** Counts completions; one object for every replay, as a serving loop would keep. */
    static final class Completions implements Completion {
        private volatile long done;
        private volatile @Nullable Throwable failure;

        @Override
        public void completed(@Nullable Throwable error) {
            if (error != null) failure = error;
            done++; // not atomic, and need not be: only the event thread completes replays
        }

        long done() {
            return done;
        }

        void spinUntil(long target) {
            while (done < target) Thread.onSpinWait();
            Throwable f = failure;
            if (f != null) throw new IllegalStateException("a replay failed", f);
        }
    }

    private static void spinUntilDone(CompletableFuture<?> w) {
        while (!w.isDone()) Thread.onSpinWait();
        w.join();
    }
}
