package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jccl.nccl.profiler=on} with the real library (2.28+), two ranks on two GPUs in one process (NCCL reports no
 * profiler event for a one-rank communicator's collective): each all-reduce work's CollApi and Coll events come back as
 * JFR events carrying its communicator and sequence, on both ranks, with NCCL's own per-function sequence numbers.
 */
@Tag("gpu")
class NcclProfilerGpuTest {
    @Test
    void eachAllReducesNcclEventsAreAttributedToItsWork(@TempDir Path dir) throws Exception {
        assumeTrue(Jccl.backend(BackendKind.NCCL).deviceCount() >= 2, "needs 2 GPUs");
        NcclProfilerRun run = NcclProfilerRun.start(dir, 2, List.of("-Djccl.nccl.profiler=on"), Map.of());
        Map<String, Long> kinds = new TreeMap<>(run.activities().stream().collect(Collectors.groupingBy(e -> e.getString("kind"), Collectors.counting())));
        long untagged = run.activities().stream().filter(e -> e.getLong("sequence") < 0).count();
        System.out.println(run.output() + "NCCL events by kind " + kinds + ", outside jccl operations " + untagged);
        assertTrue(run.output().contains("dropped 0"), run.output());
        List<Long> works = run.sequences("group");
        assertEquals(3, works.size(), run.output());
        for (int w = 0; w < 3; w++) {
            long s = works.get(w);
            List<RecordedEvent> apis = run.activities(s, "CollApi");
            List<RecordedEvent> tasks = run.activities(s, "Coll");
            int perRank = w < 2 ? 1 : 2;
            assertEquals(2 * perRank, apis.size(), "work " + s + ": " + run.activities());
            assertEquals(2 * perRank, tasks.size(), "work " + s + ": " + run.activities());
            for (RecordedEvent e : apis) {
                assertEquals("AllReduce", e.getString("function"), e.toString());
                assertEquals(7, e.getLong("count"), e.toString());
                assertEquals(run.communicator(), e.getString("communicator"), e.toString());
            }
            List<Long> ncclSequences = tasks.stream().map(e -> e.getLong("ncclSequence")).sorted().toList();
            assertEquals(w < 2 ? List.of((long) w, (long) w) : List.of(2L, 2L, 3L, 3L), ncclSequences, tasks.toString());
            assertEquals(List.of(0, 1), tasks.stream().map(e -> e.getInt("rank")).distinct().sorted().toList(), tasks.toString());
        }
    }

    @Test
    void overTheNetworkPathTheProxyThreadsOperationsAreAttributedThroughTheirTasks(@TempDir Path dir) throws Exception {
        assumeTrue(Jccl.backend(BackendKind.NCCL).deviceCount() >= 2, "needs 2 GPUs");
        // Without peer-to-peer and shared memory, NCCL connects the two GPUs through its network plugin (sockets), whose
        // transfers its proxy thread drives: ProxyOp events, started on that thread under each Coll task.
        NcclProfilerRun run = NcclProfilerRun.start(dir, 2, List.of("-Djccl.nccl.profiler=on",
                "-Djccl.nccl.env.NCCL_P2P_DISABLE=1", "-Djccl.nccl.env.NCCL_SHM_DISABLE=1"), Map.of());
        Map<String, Long> kinds = new TreeMap<>(run.activities().stream().collect(Collectors.groupingBy(e -> e.getString("kind"), Collectors.counting())));
        System.out.println(run.output() + "NCCL events by kind " + kinds);
        for (long s : run.sequences("group")) {
            List<RecordedEvent> proxy = run.activities(s, "ProxyOp");
            assertTrue(!proxy.isEmpty(), "work " + s + " has no ProxyOp: " + kinds);
            for (RecordedEvent e : proxy) {
                assertEquals(run.communicator(), e.getString("communicator"), e.toString());
                assertTrue(e.getLong("count") > 0 && List.of("Send", "Recv").contains(e.getString("function")), e.toString());
            }
        }
    }
}
