package org.jccl.examples.bench;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
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
 * all-gather, then the host spins until the last completed. Two ways, as the C program:
 * <pre>
 *   StepBench eager [ITERS]   the five operations issued every time (five works; the last one waited for)
 *   StepBench graph [ITERS]   the five captured once into a Step, replayed every time (one work)
 * </pre>
 * For 8 B, 4 KiB, 64 KiB and 1 MiB per operation prints p50, p99 and p99.9 of the round trip in microseconds.
 */
public final class StepBench {
    private StepBench() {
    }

    public static void main(String[] args) throws Exception {
        boolean graph = args.length > 0 && args[0].equals("graph");
        int iters = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        Backend backend = Jccl.backend();
        Communicator comm = backend.initAll(1).get(60, TimeUnit.SECONDS).get(0);
        ModuleContext context = Modules.context(comm);
        System.out.println("# " + (graph ? "graph" : "eager") + " step of 5 operations, " + backend.describe()
                + ": bytes p50 p99 p99.9 (us)");
        double[] us = new double[iters];
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
                    if (step != null) {
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

    /** The stand-in for a kernel: zeroes {@code buffer} on the communicator's stream. */
    private static StreamOperation fill(ModuleContext context, Buffer buffer) {
        MemoryRef ref = context.memory(buffer);
        long bytes = buffer.byteSize();
        return new StreamOperation("fill(" + bytes + ")", List.of(buffer),
                stream -> context.driver().memsetAsync(ref.block(), ref.offset(), 0, bytes, stream));
    }
}
