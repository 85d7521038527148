package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.TestAccess;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.WaitDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** A library built without the optional functions: each use is an UnsupportedFeatureException, never a crash. */
class MissingFeaturesTest {
    @TempDir
    Path dir;

    @Test
    void optionalFunctionsAbsentFromAnOldLibraryAreReportedWithTheirFirstVersion() {
        StubLibraries stubs = StubLibraries.build(dir, 22204, true);
        NcclDriver driver = stubs.open();
        assertFalse(driver.features().has(Feature.COMM_SHRINK));
        assertTrue(driver.features().hasFunction("ncclAllReduce"));
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        DriverStream stream = driver.createStream(0);
        Buffer a = TestAccess.buffer(driver, driver.allocate(0, 64, MemoryKind.DEVICE));
        stubs.ncclCalls();

        expectMissing(stubs, "ncclCommShrink", "NCCL 2.27.3", () -> comm.shrink(new int[] {1}, CommConfig.DEFAULT));
        // Validation asks before anything is enqueued; the driver's launch trusts it (features are checked once).
        expectMissing(stubs, "ncclGather", "NCCL 2.28.3", () -> driver.checkSupported(org.jccl.core.OpKind.GATHER));
        expectMissing(stubs, "ncclScatter", "NCCL 2.28.3", () -> driver.checkSupported(org.jccl.core.OpKind.SCATTER));
        expectMissing(stubs, "ncclAlltoAll", "NCCL 2.28.3", () -> driver.checkSupported(org.jccl.core.OpKind.ALL_TO_ALL));
        expectMissing(stubs, "ncclAlltoAllv", LibraryVersions.RCCL_ONLY, () -> driver.checkSupported(org.jccl.core.OpKind.ALL_TO_ALL_V));
        expectMissing(stubs, "ncclAllReduceWithBias", LibraryVersions.RCCL_ONLY,
                () -> driver.checkSupported(org.jccl.core.OpKind.ALL_REDUCE_WITH_BIAS));
        driver.checkSupported(org.jccl.core.OpKind.ALL_REDUCE);
        expectMissing(stubs, "ncclGroupSimulateEnd", "NCCL 2.22.3", driver::groupSimulateEnd);
        expectMissing(stubs, "ncclCommInitRankScalable", "NCCL 2.23.4",
                () -> driver.initRankScalable(2, 0, List.of(new byte[128]), 0, CommConfig.DEFAULT));
        expectMissing(stubs, "ncclMemAlloc", "NCCL 2.19.1", () -> driver.allocate(0, 64, MemoryKind.COMMUNICATION));
        expectMissing(stubs, "ncclCommSuspend", "NCCL 2.29.7", () -> comm.suspend(0));
        expectMissing(stubs, "ncclCommResume", "NCCL 2.29.7", comm::resume);
        expectMissing(stubs, "ncclCommMemStats", "NCCL 2.29.7", comm::memStats);
        expectMissing(stubs, "ncclCommGrow", "NCCL 2.29.2", () -> comm.grow(4, null, CommConfig.DEFAULT));
        expectMissing(stubs, "ncclCommGetUniqueId", "NCCL 2.29.2", comm::growUniqueId);
        MemoryBlock windowMemory = driver.allocate(0, 4096, MemoryKind.DEVICE);
        expectMissing(stubs, "ncclCommWindowRegister", "NCCL 2.27.3",
                () -> rma(comm).windowRegister(windowMemory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC));
        expectMissing(stubs, "ncclCommWindowDeregister", "NCCL 2.27.3", () -> rma(comm).windowDeregister(1));
        expectMissing(stubs, "ncclCommWindowRegister", "NCCL 2.27.3", rma(comm)::oneSidedLimits);
        expectMissing(stubs, "ncclWinGetUserPtr", "NCCL 2.29.2", () -> rma(comm).windowUserPointer(1));
        expectMissing(stubs, "ncclPutSignal", "NCCL 2.29.2",
                () -> rma(comm).putSignal(new MemoryRef(windowMemory, 0), 1, DataType.INT8, 1, 1, 0, 0, 0, stream));
        expectMissing(stubs, "ncclSignal", "NCCL 2.29.2", () -> rma(comm).signal(1, 0, 0, stream));
        expectMissing(stubs, "ncclWaitSignal", "NCCL 2.29.2",
                () -> rma(comm).waitSignal(new WaitDescriptor[] {new WaitDescriptor(1, 1, 0, 0)}, stream));
        windowMemory.release();
        String fp8 = driver.rejects(DataType.FLOAT8_E4M3, ReduceOp.SUM.code(), 2);
        assertTrue(fp8 != null && fp8.contains("NCCL 2.24"), String.valueOf(fp8));
        assertEquals(null, driver.rejects(DataType.BFLOAT16, ReduceOp.SUM.code(), 2));
        a.close();
        stream.destroy();
        comm.destroy();
    }

    private static void expectMissing(StubLibraries stubs, String function, String firstVersion, Executable call) {
        UnsupportedFeatureException e = assertThrows(UnsupportedFeatureException.class, call);
        assertEquals(function, e.function());
        assertTrue(e.getMessage().contains(stubs.nccl.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("NCCL 2.22.4"), e.getMessage());
        assertTrue(e.getMessage().contains(firstVersion), e.getMessage());
        assertTrue(stubs.ncclCalls().stream().noneMatch(l -> l.startsWith(function)), "nothing called");
    }

    static org.jccl.core.spi.OneSidedComm rma(DriverComm c) {
        return java.util.Objects.requireNonNull(c.capability(org.jccl.core.spi.OneSidedComm.class));
    }
}
