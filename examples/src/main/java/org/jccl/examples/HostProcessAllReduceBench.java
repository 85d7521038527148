package org.jccl.examples;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;

/**
 * The host backend's all-reduce with one process per rank (TCP between them), to compare with the in-JVM
 * figure of {@link HostAllReduceBench}. Run it under the launcher:
 *
 * <pre>
 * java -cp ... org.jccl.core.launch.Launcher --nproc 2 --jvm-arg -XX:MaxDirectMemorySize=2g \
 *     -- org.jccl.examples.HostProcessAllReduceBench 256 5
 * </pre>
 *
 * <p>Arguments: {@code [MiB=256] [iterations=5]}. Rank 0 prints the median time, algorithm bandwidth and bus
 * bandwidth ({@code 2(n-1)/n × bytes / time}, as nccl-tests define it) of an in-place float32 sum.
 */
public final class HostProcessAllReduceBench {
    private HostProcessAllReduceBench() {
    }

    /**
     * Runs one rank of the benchmark.
     *
     * @param args MiB per rank, timed iterations
     * @throws Exception if creation or an all-reduce fails
     */
    public static void main(String[] args) throws Exception {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 256;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        long bytes = mib << 20;
        Backend host = Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            int n = rdzv.worldSize();
            UniqueId id = rdzv.shareUniqueIdNow("bench-host-id", host::newUniqueId);
            try (Communicator comm = host.initRank(id, n, rank, -1).get(5, TimeUnit.MINUTES);
                 Buffer buffer = host.allocate(0, bytes)) {
                ByteBuffer ones = ByteBuffer.allocate(1 << 20).order(ByteOrder.nativeOrder());
                while (ones.remaining() >= 4) ones.putFloat(rank + 1);
                for (long at = 0; at < bytes; at += ones.capacity()) {
                    ones.clear();
                    buffer.write(at, ones);
                }
                long count = bytes / 4;
                for (int i = 0; i < 2; i++) comm.allReduce(buffer, buffer, count, DataType.FLOAT32, ReduceOp.SUM).get(10, TimeUnit.MINUTES);
                double[] seconds = new double[iterations];
                for (int i = 0; i < iterations; i++) {
                    rdzv.barrierNow("iteration-" + i);
                    long start = System.nanoTime();
                    comm.allReduce(buffer, buffer, count, DataType.FLOAT32, ReduceOp.SUM).get(10, TimeUnit.MINUTES);
                    seconds[i] = (System.nanoTime() - start) / 1e9;
                }
                Arrays.sort(seconds);
                double median = seconds[iterations / 2];
                double algGBs = bytes / median / 1e9;
                double busGBs = algGBs * 2.0 * (n - 1) / n;
                if (rank == 0) {
                    System.out.printf("host backend across processes (TCP), %d ranks, %d MiB float32 sum all-reduce (in place)%n", n, mib);
                    System.out.printf("all-reduce time       %8.2f ms (median of %d)%n", median * 1e3, iterations);
                    System.out.printf("all-reduce algbw      %8.2f GB/s%n", algGBs);
                    System.out.printf("all-reduce busbw      %8.2f GB/s%n", busGBs);
                }
            }
        }
    }
}
