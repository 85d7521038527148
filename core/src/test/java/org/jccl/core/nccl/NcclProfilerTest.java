package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jccl.nccl.profiler=on} over the NCCL stub, which drives the plugin as NCCL 2.28/2.29 do (stub_profiler.h):
 * NCCL's events come back as {@code jccl.NcclActivity} JFR events carrying the communicator and sequence of the jccl
 * operation that caused them, including a task event NCCL starts on another thread; where the plugin cannot work, a
 * warning says why and no event appears. The real library's side is {@link NcclProfilerGpuTest}'s.
 */
class NcclProfilerTest {
    @AfterEach
    void clear() {
        System.clearProperty(JcclSettings.NCCL_PROFILER.property());
    }

    private static List<String> properties(StubLibraries stubs) {
        return List.of("-Djccl.nccl.library=" + stubs.nccl, "-Djccl.cuda.runtime=" + stubs.cudart, "-Djccl.nccl.profiler=on");
    }

    @Test
    void ncclsEventsBecomeJfrEventsOfTheOperationsThatCausedThem(@TempDir Path dir) throws Exception {
        NcclProfilerRun run = NcclProfilerRun.start(dir, 1, properties(StubLibraries.buildForBackend(dir, 22907)), Map.of());
        assertTrue(run.output().contains("dropped 0"), run.output());
        List<Long> allReduces = run.sequences("allReduce");
        List<Long> groups = run.sequences("group");
        assertEquals(2, allReduces.size(), run.output());
        assertEquals(1, groups.size(), run.output());
        for (RecordedEvent e : run.activities()) {
            assertEquals(run.communicator(), e.getString("communicator"), e.toString());
            assertTrue(allReduces.contains(e.getLong("sequence")) || groups.contains(e.getLong("sequence")), e.toString());
            assertTrue(e.getLong("elapsed") >= 0 && !e.getString("ncclCommunicator").isEmpty(), e.toString());
        }
        for (int i = 0; i < 2; i++) {
            long s = allReduces.get(i);
            assertEquals(1, run.activities(s, "GroupApi").size(), run.output() + run.activities());
            assertEquals(1, run.activities(s, "KernelLaunch").size(), run.activities().toString());
            RecordedEvent api = single(run.activities(s, "CollApi"));
            assertEquals("AllReduce", api.getString("function"));
            assertEquals(7, api.getLong("count"));
            assertEquals("ncclFloat32", api.getString("dataType"));
            // Started on a thread of the stub's own, like NCCL's host callbacks: attributed through its CollApi parent.
            RecordedEvent task = single(run.activities(s, "Coll"));
            assertEquals("AllReduce", task.getString("function"));
            assertEquals(7, task.getLong("count"));
            assertEquals(i, task.getLong("ncclSequence"));
            assertEquals("RING", task.getString("algorithm"));
            assertEquals("SIMPLE", task.getString("protocol"));
            assertEquals(2, task.getInt("channels"));
        }
        long group = groups.get(0);
        assertEquals(1, run.activities(group, "GroupApi").size(), "one GroupApi spans the group");
        assertEquals(2, run.activities(group, "CollApi").size());
        assertEquals(List.of(2L, 3L), run.activities(group, "Coll").stream().map(e -> e.getLong("ncclSequence")).sorted().toList());
        assertEquals(4 * 2 + 1 + 2 * 3, run.activities().size(), "nothing else, nothing twice: " + run.activities());
    }

    @Test
    void aPluginTheUserNamedWinsWithAWarning(@TempDir Path dir) throws Exception {
        NcclProfilerRun run = NcclProfilerRun.start(dir, 1, properties(StubLibraries.buildForBackend(dir, 22907)),
                Map.of("NCCL_PROFILER_PLUGIN", dir.resolve("theirs.so").toString()));
        assertTrue(run.output().contains("NCCL_PROFILER_PLUGIN=" + dir.resolve("theirs.so") + " is set, so NCCL loads that plugin"), run.output());
        assertEquals(List.of(), run.activities());
        assertEquals(3, run.operations().size(), "the operations themselves are recorded as ever");
    }

    @Test
    void anNcclBefore228IsNamedAndReportsNothing(@TempDir Path dir) throws Exception {
        NcclProfilerRun run = NcclProfilerRun.start(dir, 1, properties(StubLibraries.buildForBackend(dir, 22709)), Map.of());
        assertTrue(run.output().contains("no NCCL profiler events: NCCL 2.27.9 is older than 2.28.0"), run.output());
        assertEquals(List.of(), run.activities());
        assertEquals(3, run.operations().size());
    }

    @Test
    void anNcclThatDoesNotLoadThePluginIsNamed(@TempDir Path dir) throws Exception {
        NcclProfilerRun run = NcclProfilerRun.start(dir, 1,
                properties(StubLibraries.buildForBackend(dir, 22907, "-DSTUB_NO_PROFILER")), Map.of());
        assertTrue(run.output().contains("no NCCL profiler events: NCCL did not load it from NCCL_PROFILER_PLUGIN="), run.output());
        assertEquals(List.of(), run.activities());
    }

    @Test
    void aModeOtherThanOnOrOffIsRefusedNamingTheProperty() {
        System.setProperty(JcclSettings.NCCL_PROFILER.property(), "yes");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, NcclProfiler::applyIfAsked);
        assertTrue(e.getMessage().contains("jccl.nccl.profiler") && e.getMessage().contains("'yes'"), e.getMessage());
    }

    private static RecordedEvent single(List<RecordedEvent> events) {
        assertEquals(1, events.size(), events.toString());
        return events.get(0);
    }
}
