package org.jccl.examples.bench;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Completion;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Modules;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Step;
import org.jccl.core.Work;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;

/**
 * A serving loop's step measured from Java, with the method of {@code examples/bench/raw_step_bench.c} so the two run
 * in one sitting, on one GPU (one rank): broadcast the batch, a "kernel" (a fill), an all-reduce, a "kernel", an
 * all-gather, then the host spins until the last completed. Two ways, as the C program, and a third without a future:
 * <pre>
 *   StepBench eager [ITERS]      the five operations issued every time (five works; the last one waited for)
 *   StepBench graph [ITERS]      the five captured once into a Step, replayed every time (one work)
 *   StepBench callback [ITERS]   as graph, replayed with a Completion: no work, nothing allocated per replay
 * </pre>
 * For 8 B, 4 KiB, 64 KiB and 1 MiB per operation prints p50, p99 and p99.9 of the round trip in microseconds.
 */
public final class StepBench {
    private StepBench() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "eager";
        boolean callback = mode.equals("callback");
        boolean graph = callback || mode.equals("graph");
        int iters = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        Backend backend = Jccl.backend();
        Communicator comm = backend.initAll(1).get(60, TimeUnit.SECONDS).get(0);
        ModuleContext context = Modules.context(comm);
        System.out.println("# " + mode + " step of 5 operations, " + backend.describe()
                + ": bytes p50 p99 p99.9 (us)");
        double[] us = new double[iters];
        Replays replays = new Replays();
        for (long bytes : new long[] {8, 4096, 65536, 1 << 20}) {
            long n = Math.max(1, bytes / 4);
            try (Buffer batch = backend.allocate(comm.device(), 4 * n);
                 Buffer hidden = backend.allocate(comm.device(), 4 * n);
                 Buffer gathered = backend.allocate(comm.device(), 4 * n)) {
                List<Object> ops = List.of(Operation.broadcast(batch, batch, n, DataType.FLOAT32, 0), fill(context, hidden),
                        Operation.allReduce(batch, hidden, n, DataType.FLOAT32, ReduceOp.SUM), fill(context, batch),
                        Operation.allGather(hidden, gathered, n, DataType.FLOAT32));
                Step step = null;
                if (graph) {
                    Step.Builder b = Step.builder(comm);
                    for (Object op : ops) {
                        if (op instanceof Operation o) b.add(o);
                        else b.add((StreamOperation) op);
                    }
                    step = b.build().get(60, TimeUnit.SECONDS);
                }
                for (int i = -iters / 10; i < iters; i++) { // the first tenth warms up
                    long t0 = System.nanoTime();
                    Work last;
                    if (callback) {
                        long target = replays.done + 1;
                        step.replay(replays);
                        while (replays.done < target) Thread.onSpinWait();
                        replays.check();
                        if (i >= 0) us[i] = (System.nanoTime() - t0) / 1e3;
                        continue;
                    } else if (step != null) {
                        last = step.replay();
                    } else {
                        last = null;
                        for (Object op : ops) {
                            last = op instanceof Operation o ? comm.submit(o) : context.issue((StreamOperation) op);
                        }
                    }
                    while (!last.isDone()) Thread.onSpinWait(); // as Bench's latency mode and the C loop wait
                    last.join();
                    if (i >= 0) us[i] = (System.nanoTime() - t0) / 1e3;
                }
                if (step != null) step.close();
            }
            Arrays.sort(us);
            System.out.printf("%8d %7.2f %7.2f %7.2f%n", bytes, us[iters / 2], us[(int) (iters * 0.99)], us[(int) (iters * 0.999)]);
        }
        comm.close();
    }

    /** Counts replays as they complete: one object for all of them. */
    private static final class Replays implements Completion {
        volatile long done;
        volatile Throwable failure;

        @Override
        public void completed(Throwable error) {
            if (error != null) failure = error;
            done++; // only the event thread completes replays
        }

        void check() {
            if (failure != null) throw new IllegalStateException("a replay failed", failure);
        }
    }

    /** The stand-in for a kernel: zeroes {@code buffer} on the communicator's stream. */
    private static StreamOperation fill(ModuleContext context, Buffer buffer) {
        MemoryRef ref = context.memory(buffer);
        long bytes = buffer.byteSize();
        return new StreamOperation("fill(" + bytes + ")", List.of(buffer),
                stream -> context.driver().memsetAsync(ref.block(), ref.offset(), 0, bytes, stream));
    }
}
