package org.jccl.rma;

import static org.awaitility.Awaitility.await;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.jfr.NcclActivityEvent;

/**
 * {@link OneSidedProfilerGpuTest}'s program, in a JVM of its own (NCCL reads NCCL_PROFILER_PLUGIN once per process):
 * every GPU a rank, an all-reduce over all ranks, then rank 0's put/signal into the last rank's window and the last
 * rank's wait, recorded with JFR into {@code args[0]} once the profiler's drain has committed every event the plugin
 * recorded (read through core's package-private counters); prints the communicator id and each work's sequence number.
 */
public final class OneSidedProfilerMain {
    private OneSidedProfilerMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Recording recording = new Recording()) {
            recording.enable(NcclActivityEvent.NAME).withThreshold(Duration.ZERO);
            recording.start();
            Backend nccl = Jccl.backend(BackendKind.NCCL);
            List<Communicator> comms = nccl.initAll(nccl.deviceCount()).get(120, TimeUnit.SECONDS);
            int last = comms.size() - 1;
            try {
                List<Window> ws = OneSided.registerAll(comms, 1 << 20, WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
                Group all = Group.create();
                for (int r = 0; r <= last; r++) {
                    all.add(comms.get(r), Operation.allReduce(ws.get(r).buffer(), ws.get(r).buffer(), 7, DataType.FLOAT32, ReduceOp.SUM));
                }
                Work allReduce = all.submit();
                allReduce.get(60, TimeUnit.SECONDS);
                Work put = OneSided.of(comms.get(0)).putSignal(ws.get(0), ws.get(0).buffer().slice(1 << 19, 4096), 1024,
                        DataType.FLOAT32, last, 0);
                Work wait = OneSided.of(comms.get(last)).waitSignal(SignalWait.of(0, 1));
                wait.get(60, TimeUnit.SECONDS);
                put.get(60, TimeUnit.SECONDS);
                OneSided.closeAll(ws).get(60, TimeUnit.SECONDS);
                System.out.println("communicator " + comms.get(0).id() + " allReduce " + allReduce.sequence()
                        + " putSignal " + put.sequence() + " waitSignal " + wait.sequence());
            } finally {
                comms.forEach(Communicator::close);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> profiler("delivered").equals(((long[]) profiler("counts"))[1]));
            recording.stop();
            recording.dump(Path.of(args[0]));
        }
    }

    /** A static method of core's NcclProfiler (package-private: not API), called by name. */
    private static Object profiler(String method) throws Exception {
        Method m = Class.forName("org.jccl.core.nccl.NcclProfiler").getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(null);
    }
}
