package org.jccl.core.nccl;

import static org.jccl.core.nccl.StubLibraries.single;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.TestAccess;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where RCCL and NCCL differ in what they export or accept: RCCL 2.29's {@code ncclAlltoAllv} with the deprecated
 * {@code ncclAllToAllv} only as a fallback, and a revoked communicator, which {@code ncclCommFinalize} refuses, closed
 * by destroying it alone.
 */
class RcclNamesAndRevokeTest {
    @TempDir
    Path dir;

    @Test
    void allToAllvCallsTheCurrentNameWhenTheLibraryHasBoth() throws Exception {
        assertEquals("ncclAlltoAllv", allToAllvCalledIn(StubLibraries.build(dir, 22907)));
    }

    @Test
    void allToAllvFallsBackToTheDeprecatedNameOfOlderRccl() throws Exception {
        assertEquals("ncclAllToAllv", allToAllvCalledIn(StubLibraries.build(dir, 22907, "-DSTUB_OLD_ALLTOALLV")));
    }

    /** The one all-to-all-v function the driver called, by name. */
    private static String allToAllvCalledIn(StubLibraries stubs) {
        NcclDriver driver = stubs.open();
        DriverStream stream = driver.createStream(0);
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        Buffer a = TestAccess.buffer(driver, driver.allocate(0, 64, MemoryKind.DEVICE));
        Buffer b = TestAccess.buffer(driver, driver.allocate(0, 64, MemoryKind.DEVICE));
        try {
            stubs.ncclCalls();
            long[] counts = {1, 2};
            long[] displacements = {0, 1};
            driver.launch(comm, TestAccess.lower(Operation.allToAllv(a, counts, displacements, b, counts, displacements,
                    DataType.INT32)), stream);
            List<String> calls = stubs.ncclCalls();
            List<String> allToAllv = calls.stream().filter(l -> l.toLowerCase().startsWith("ncclalltoallv ")).toList();
            assertEquals(1, allToAllv.size(), "one all-to-all-v call in " + calls);
            return allToAllv.get(0).substring(0, allToAllv.get(0).indexOf(' '));
        } finally {
            a.close();
            b.close();
            comm.destroy();
            stream.destroy();
        }
    }

    @Test
    void closeAfterRevokeDestroysWithoutFinalizing() throws Exception {
        StubLibraries stubs = StubLibraries.build(Files.createDirectory(dir.resolve("revoked")), 22907);
        Backend backend = TestAccess.backend(stubs.open());
        Communicator comm = backend.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        stubs.ncclCalls();
        comm.revoke().get(30, TimeUnit.SECONDS);
        comm.closeAsync().get(30, TimeUnit.SECONDS);
        List<String> calls = stubs.ncclCalls();
        single(calls, "ncclCommRevoke ");
        single(calls, "ncclCommDestroy ");
        assertTrue(calls.stream().noneMatch(l -> l.startsWith("ncclCommFinalize")), "no finalize after revoke: " + calls);
    }

    @Test
    void closeOfAnOpenCommunicatorFinalizesThenDestroys() throws Exception {
        StubLibraries stubs = StubLibraries.build(Files.createDirectory(dir.resolve("open")), 22907);
        Backend backend = TestAccess.backend(stubs.open());
        Communicator comm = backend.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        stubs.ncclCalls();
        comm.closeAsync().get(30, TimeUnit.SECONDS);
        List<String> order = stubs.ncclCalls().stream()
                .filter(l -> l.startsWith("ncclCommFinalize") || l.startsWith("ncclCommDestroy"))
                .map(l -> l.substring(0, l.indexOf(' ')))
                .toList();
        assertEquals(List.of("ncclCommFinalize", "ncclCommDestroy"), order);
    }
}
