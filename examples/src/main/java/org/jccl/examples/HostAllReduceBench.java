package org.jccl.examples;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;

/**
 * How fast the host backend's all-reduce is against this machine's memory bandwidth: measures a large direct
 * buffer copy (memcpy) and an in-place float32 sum all-reduce over ranks that are threads of this JVM, and prints
 * both with their ratio, for the best and the median run of each (the machine may be shared). Bus bandwidth is as nccl-tests define it: {@code 2(n-1)/n × bytes / time}.
 *
 * <p>Arguments: {@code [ranks=4] [MiB=256] [iterations=5]}. Needs direct memory for {@code ranks × MiB} plus two
 * copy buffers, e.g. {@code -XX:MaxDirectMemorySize=4g}.
 */
public final class HostAllReduceBench {
    private HostAllReduceBench() {
    }

    /**
     * Runs the benchmark and prints the figures.
     *
     * @param args ranks, MiB per rank, timed iterations
     * @throws Exception if the all-reduce fails
     */
    public static void main(String[] args) throws Exception {
        int ranks = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long mib = args.length > 1 ? Long.parseLong(args[1]) : 256;
        int iterations = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        long bytes = mib << 20;

        double[] copySeconds = memcpySeconds((int) bytes, iterations);

        Backend host = Jccl.backend(BackendKind.HOST);
        List<Communicator> comms = host.initAll(ranks).get(60, TimeUnit.SECONDS);
        List<Buffer> buffers = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            Buffer b = host.allocate(0, bytes);
            b.write(0, filled((int) Math.min(bytes, 1 << 20), r));
            buffers.add(b);
        }
        long count = bytes / 4;
        allReduce(comms, buffers, count); // warm-up: JIT, scratch arrays, page faults
        allReduce(comms, buffers, count);
        double[] seconds = new double[iterations];
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            allReduce(comms, buffers, count);
            seconds[i] = (System.nanoTime() - start) / 1e9;
        }
        Arrays.sort(seconds);
        double busFactor = 2.0 * (ranks - 1) / ranks;
        System.out.printf("host backend, %d CPU cores, %d ranks, %d MiB float32 sum all-reduce (in place), %d runs%n",
                Runtime.getRuntime().availableProcessors(), ranks, mib, iterations);
        System.out.printf("%-8s %14s %14s %14s %14s%n", "", "memcpy GB/s", "allreduce ms", "busbw GB/s", "busbw/memcpy");
        report("best", bytes / copySeconds[0] / 1e9, seconds[0], bytes, busFactor);
        report("median", bytes / copySeconds[iterations / 2] / 1e9, seconds[iterations / 2], bytes, busFactor);

        for (Communicator c : comms) c.close();
        for (Buffer b : buffers) b.close();
    }

    private static void allReduce(List<Communicator> comms, List<Buffer> buffers, long count) throws Exception {
        Work[] works = new Work[comms.size()];
        for (int r = 0; r < comms.size(); r++) {
            works[r] = comms.get(r).allReduce(buffers.get(r), buffers.get(r), count, DataType.FLOAT32, ReduceOp.SUM);
        }
        CompletableFuture.allOf(works).get(10, TimeUnit.MINUTES);
    }

    private static void report(String label, double copyGBs, double allReduceSeconds, long bytes, double busFactor) {
        double busGBs = bytes / allReduceSeconds / 1e9 * busFactor;
        System.out.printf("%-8s %14.2f %14.2f %14.2f %13.1f%%%n", label, copyGBs, allReduceSeconds * 1e3, busGBs,
                100 * busGBs / copyGBs);
    }

    /** The sorted durations of {@code iterations} large direct-buffer copies. */
    private static double[] memcpySeconds(int bytes, int iterations) {
        ByteBuffer src = ByteBuffer.allocateDirect(bytes);
        ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i += 4096) src.put(i, (byte) i);
        dst.put(0, src, 0, bytes); // warm-up, and touch every page of dst
        double[] seconds = new double[iterations];
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            dst.put(0, src, 0, bytes);
            seconds[i] = (System.nanoTime() - start) / 1e9;
        }
        Arrays.sort(seconds);
        return seconds;
    }

    private static ByteBuffer filled(int bytes, int rank) {
        ByteBuffer b = ByteBuffer.allocate(bytes).order(java.nio.ByteOrder.nativeOrder());
        while (b.remaining() >= 4) b.putFloat(rank + 1);
        b.flip();
        return b;
    }
}
