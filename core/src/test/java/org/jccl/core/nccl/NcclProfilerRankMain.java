package org.jccl.core.nccl;

import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.jfr.NcclActivityEvent;
import org.jccl.core.jfr.OperationEvent;

/**
 * {@link NcclProfilerTest}'s and {@link NcclProfilerGpuTest}'s program, in a JVM of its own (NCCL reads
 * NCCL_PROFILER_PLUGIN once per process): with a JFR recording of jccl's operations and NCCL's activity, the ranks of
 * process ({@code args[1]}, default 1, one per device) run two all-reduces of 7 floats (one work each, over every rank)
 * and a group of two more on each rank; then it waits until every event the plugin recorded was committed, and writes
 * the recording to {@code args[0]}. Prints the first communicator's id and the plugin's counts.
 */
public final class NcclProfilerRankMain {
    private NcclProfilerRankMain() {
    }

    public static void main(String[] args) throws Exception {
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        try (Recording recording = new Recording()) {
            recording.enable(OperationEvent.NAME).withThreshold(Duration.ZERO);
            recording.enable(NcclActivityEvent.NAME).withThreshold(Duration.ZERO);
            recording.start();
            Backend nccl = Jccl.backend(BackendKind.NCCL);
            List<Communicator> comms = nccl.initAll(ranks).get(120, TimeUnit.SECONDS);
            try {
                run(nccl, comms);
            } finally {
                comms.forEach(Communicator::close);
            }
            long[] counts = NcclProfiler.counts();
            if (NcclProfiler.active()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> NcclProfiler.delivered() == NcclProfiler.counts()[1]);
            }
            recording.stop();
            recording.dump(Path.of(args[0]));
            System.out.println("communicator " + comms.get(0).id() + " contexts " + counts[0] + " recorded " + counts[1]
                    + " dropped " + counts[2]);
        }
    }

    private static void run(Backend nccl, List<Communicator> comms) throws Exception {
        int n = comms.size();
        Buffer[] buffers = new Buffer[n];
        try {
            for (int r = 0; r < n; r++) buffers[r] = nccl.allocate(comms.get(r).device(), 4096);
            for (int round = 0; round < 2; round++) {
                Group each = Group.create();
                for (int r = 0; r < n; r++) each.add(comms.get(r), Operation.allReduce(buffers[r], buffers[r], 7, DataType.FLOAT32, ReduceOp.SUM));
                each.submit().get(60, TimeUnit.SECONDS);
            }
            Group twice = Group.create();
            for (int r = 0; r < n; r++) {
                twice.add(comms.get(r), Operation.allReduce(buffers[r], buffers[r], 7, DataType.FLOAT32, ReduceOp.SUM));
                twice.add(comms.get(r), Operation.allReduce(buffers[r], buffers[r], 7, DataType.FLOAT32, ReduceOp.SUM));
            }
            twice.submit().get(60, TimeUnit.SECONDS);
        } finally {
            for (Buffer b : buffers) if (b != null) b.close();
        }
    }
}
