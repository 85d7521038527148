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
 * both with their ratio. Bus bandwidth is as nccl-tests define it: {@code 2(n-1)/n × bytes / time}.
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

        double copyGBs = memcpyBandwidth((int) bytes, iterations);

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
        double median = seconds[iterations / 2];
        double algGBs = bytes / median / 1e9;
        double busGBs = algGBs * 2.0 * (ranks - 1) / ranks;
        System.out.printf("host backend, %d CPU cores, %d ranks, %d MiB float32 sum all-reduce (in place)%n",
                Runtime.getRuntime().availableProcessors(), ranks, mib);
        System.out.printf("memcpy bandwidth      %8.2f GB/s (direct ByteBuffer copy of %d MiB, best of %d)%n", copyGBs, mib, iterations);
        System.out.printf("all-reduce time       %8.2f ms (median of %d)%n", median * 1e3, iterations);
        System.out.printf("all-reduce algbw      %8.2f GB/s%n", algGBs);
        System.out.printf("all-reduce busbw      %8.2f GB/s%n", busGBs);
        System.out.printf("busbw / memcpy        %8.1f %%%n", 100 * busGBs / copyGBs);

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

    /** Bytes copied per second, in GB/s, of the best of {@code iterations} large direct-buffer copies. */
    private static double memcpyBandwidth(int bytes, int iterations) {
        ByteBuffer src = ByteBuffer.allocateDirect(bytes);
        ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i += 4096) src.put(i, (byte) i);
        dst.put(0, src, 0, bytes); // warm-up, and touch every page of dst
        double best = Double.MAX_VALUE;
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            dst.put(0, src, 0, bytes);
            best = Math.min(best, (System.nanoTime() - start) / 1e9);
        }
        return bytes / best / 1e9;
    }

    private static ByteBuffer filled(int bytes, int rank) {
        ByteBuffer b = ByteBuffer.allocate(bytes).order(java.nio.ByteOrder.nativeOrder());
        while (b.remaining() >= 4) b.putFloat(rank + 1);
        b.flip();
        return b;
    }
}
