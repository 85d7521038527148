package org.jccl.core.nccl;

import static org.jccl.core.nccl.StubLibraries.field;
import static org.jccl.core.nccl.StubLibraries.pointer;
import static org.jccl.core.nccl.StubLibraries.single;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.error.SystemErrorException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.core.spi.WaitDescriptor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Windows and one-sided operations against a stub NCCL 2.29.7 that logs every call; older stubs for the limits. */
class NcclWindowContractTest {
    /** The size at which the stub answers like a communicator without symmetric-memory support. */
    private static final long NO_SYMMETRIC_BYTES = 4095L * 4096;
    private static final int BOTH_FLAGS = DriverConstants.WIN_COLL_SYMMETRIC | DriverConstants.WIN_STRICT_ORDERING;

    @TempDir
    static Path dir;
    static StubLibraries stubs;
    static NcclDriver driver;
    static DriverStream stream;
    static DriverComm comm;
    static MemoryBlock memory;

    @BeforeAll
    static void build() {
        stubs = StubLibraries.build(dir, 22907, false);
        driver = stubs.open();
        stream = driver.createStream(0);
        comm = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        memory = driver.allocate(0, 4 * 4096, MemoryKind.COMMUNICATION);
    }

    @AfterAll
    static void close() {
        memory.release();
        comm.destroy();
        stream.destroy();
    }

    @BeforeEach
    void forgetEarlierCalls() {
        stubs.ncclCalls();
        stubs.runtimeCalls();
    }

    private static String tail(DriverComm c) {
        return " comm=" + pointer(((NcclComm) c).handle()) + " stream=" + pointer(stream.handle());
    }

    @Test
    void registerPassesTheRangeAndFlagsAndDeregisterTheWindow() {
        assertTrue(driver.features().has(Feature.PUT_SIGNAL));
        long window = rma(comm).windowRegister(memory, 4096, 2 * 4096, BOTH_FLAGS);
        assertNotEquals(0L, window);
        assertEquals(List.of("ncclCommWindowRegister comm=" + pointer(((NcclComm) comm).handle()) + " buffer="
                + pointer(memory.address() + 4096) + " bytes=8192 flags=3"), stubs.ncclCalls());

        assertEquals(memory.address() + 4096, rma(comm).windowUserPointer(window));
        assertEquals(pointer(window), field(single(stubs.ncclCalls(), "ncclWinGetUserPtr"), "window"));

        rma(comm).windowDeregister(window);
        assertEquals(List.of("ncclCommWindowDeregister comm=" + pointer(((NcclComm) comm).handle()) + " window=" + pointer(window)),
                stubs.ncclCalls());

        assertThrows(InvalidArgumentException.class, () -> rma(comm).windowRegister(memory, 4096, 4 * 4096, 0));
        assertTrue(stubs.ncclCalls().isEmpty(), "a range outside the block reaches nothing");
    }

    @Test
    void aNullWindowMeansTheCommunicatorHasNoSymmetricMemory() {
        MemoryBlock large = driver.allocate(0, NO_SYMMETRIC_BYTES, MemoryKind.COMMUNICATION);
        try {
            UnsupportedFeatureException e = assertThrows(UnsupportedFeatureException.class,
                    () -> rma(comm).windowRegister(large, 0, NO_SYMMETRIC_BYTES, DriverConstants.WIN_COLL_SYMMETRIC));
            assertEquals("ncclCommWindowRegister", e.function());
            assertTrue(e.getMessage().contains("no symmetric-memory support"), e.getMessage());
            assertTrue(e.getMessage().contains("NCCL 2.29.7"), e.getMessage());
            assertEquals(1, stubs.ncclCalls().stream().filter(l -> l.startsWith("ncclCommWindowRegister")).count());
        } finally {
            large.release();
        }
    }

    @Test
    void failedRegistrationsBecomeTypedExceptions() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> rma(comm).windowRegister(memory, 0, 1004, 1));
        assertEquals(4, e.resultCode());
        assertEquals("stub error string 4", e.libraryMessage());
        assertEquals("stub last error", e.lastError());
        assertTrue(e.getMessage().contains("ncclCommWindowRegister"), e.getMessage());
        assertEquals(6, assertThrows(RemoteErrorException.class, () -> rma(comm).windowRegister(memory, 0, 1006, 1)).resultCode());
    }

    @Test
    void nonBlockingRegistrationWaitsForTheWindowNcclWritesLater() {
        DriverComm nbComm = nonBlockingComm();
        org.jccl.core.spi.OneSidedComm nb = rma(nbComm);
        long window = nb.windowRegister(memory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC);
        List<String> calls = stubs.ncclCalls();
        assertEquals(List.of("pending=2", "pending=1", "pending=0"),
                calls.stream().filter(l -> l.startsWith("ncclCommGetAsyncError")).map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList(),
                "polled until the registration's group job is done, though the call answered success");
        assertNotEquals(0L, window, "the window written after the call returned");
        assertEquals(memory.address(), nb.windowUserPointer(window));
        nb.windowDeregister(window);
        assertEquals(pointer(window), field(single(stubs.ncclCalls(), "ncclCommWindowDeregister"), "window"));

        driver.groupStart();
        try {
            assertThrows(InvalidUsageException.class, () -> nb.windowRegister(memory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC));
        } finally {
            driver.groupEnd();
        }
        assertTrue(stubs.ncclCalls().stream().noneMatch(l -> l.startsWith("ncclCommWindowRegister")), "refused inside a group");
        nbComm.destroy();
    }

    @Test
    void oneSidedCallsPassEveryArgumentInOrder() {
        long window = rma(comm).windowRegister(memory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC);
        stubs.ncclCalls();
        // Signal indices and contexts other than 0 are rejected by callers (oneSidedLimits), not by the driver: distinct
        // values show that none is swapped.
        rma(comm).putSignal(new MemoryRef(memory, 64), 16, DataType.FLOAT32, 1, window, 256, 2, 3, stream);
        assertEquals(List.of("ncclPutSignal send=" + pointer(memory.address() + 64) + " count=16 type=7 peer=1 window="
                + pointer(window) + " offset=256 sigIdx=2 ctx=3 flags=0" + tail(comm)), stubs.ncclCalls());
        rma(comm).signal(1, 4, 5, stream);
        assertEquals(List.of("ncclSignal peer=1 sigIdx=4 ctx=5 flags=0" + tail(comm)), stubs.ncclCalls());
        rma(comm).waitSignal(new WaitDescriptor[] {new WaitDescriptor(1, 0, 0, 0), new WaitDescriptor(3, 1, 0, 0),
                new WaitDescriptor(2, 1, 7, 9)}, stream);
        assertEquals(List.of("ncclWaitSignal nDesc=3 descs=1/0/0/0,3/1/0/0,2/1/7/9" + tail(comm)), stubs.ncclCalls());
        rma(comm).windowDeregister(window);
    }

    @Test
    void failedOneSidedCallsBecomeTypedExceptions() {
        long window = rma(comm).windowRegister(memory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC);
        assertFailure("ncclPutSignal", 4, InvalidArgumentException.class,
                () -> rma(comm).putSignal(new MemoryRef(memory, 0), 1004, DataType.INT8, 1, window, 0, 0, 0, stream));
        assertFailure("ncclSignal", 6, RemoteErrorException.class, () -> rma(comm).signal(1006, 0, 0, stream));
        assertFailure("ncclWaitSignal", 2, SystemErrorException.class,
                () -> rma(comm).waitSignal(new WaitDescriptor[] {new WaitDescriptor(1002, 1, 0, 0)}, stream));
        rma(comm).windowDeregister(window);
    }

    private static void assertFailure(String function, int code, Class<? extends JcclException> type, Executable call) {
        JcclException e = assertThrows(type, call);
        assertEquals(code, e.resultCode());
        assertEquals("stub error string " + code, e.libraryMessage());
        assertEquals("stub last error", e.lastError());
        assertTrue(e.getMessage().contains(function), e.getMessage());
    }

    @Test
    void oneSidedCallsOnANonBlockingCommunicatorAreHandledLikeOperations() {
        DriverComm nbComm = nonBlockingComm();
        org.jccl.core.spi.OneSidedComm nb = rma(nbComm);
        long window = nb.windowRegister(memory, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC);
        stubs.ncclCalls();

        nb.signal(1, 0, 0, stream);
        assertEquals(3, stubs.ncclCalls().stream().filter(l -> l.startsWith("ncclCommGetAsyncError")).count(),
                "outside a group the call returns when the communicator is done");

        driver.groupStart();
        nb.putSignal(new MemoryRef(memory, 0), 8, DataType.INT8, 1, window, 0, 0, 0, stream);
        nb.waitSignal(new WaitDescriptor[] {new WaitDescriptor(1, 1, 0, 0)}, stream);
        assertTrue(stubs.ncclCalls().stream().noneMatch(l -> l.startsWith("ncclCommGetAsyncError")), "no polling inside a group");
        driver.groupEnd();
        assertEquals(3, stubs.ncclCalls().stream().filter(l -> l.startsWith("ncclCommGetAsyncError")).count(),
                "groupEnd polls the communicator the one-sided calls joined");
        nb.windowDeregister(window);
        nbComm.destroy();
    }

    private static DriverComm nonBlockingComm() {
        DriverComm nb = driver.initRank(2, driver.newUniqueId(), 0, 0, CommConfig.builder().blocking(false).build());
        while (nb.asyncError() == 7) Thread.onSpinWait(); // the stub's creation is done after two polls
        stubs.ncclCalls();
        return nb;
    }

    @Test
    void limitsFollowTheLoadedVersion() {
        OneSidedLimits latest = rma(comm).oneSidedLimits();
        assertEquals(new OneSidedLimits(1, 1, true, BOTH_FLAGS, 4096, true), latest);
        assertEquals(latest, rma(comm).oneSidedLimits());

        OneSidedLimits first = limitsOf(22902);
        assertEquals(new OneSidedLimits(1, 1, true, DriverConstants.WIN_COLL_SYMMETRIC, 4096, true), first,
                "NCCL_WIN_STRICT_ORDERING only from 2.29.7");
    }

    private static OneSidedLimits limitsOf(int version) {
        StubLibraries older = stubsOf(version);
        DriverComm c = older.open().initRank(2, new byte[128], 0, 0, CommConfig.DEFAULT);
        try {
            return rma(c).oneSidedLimits();
        } finally {
            c.destroy();
        }
    }

    /** A full stub of another version, in a directory of its own (the file names are fixed). */
    private static StubLibraries stubsOf(int version) {
        try {
            return StubLibraries.build(Files.createDirectories(dir.resolve("v" + version)), version, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void nccl228HasWindowsButNoOneSidedCalls() {
        StubLibraries older = stubsOf(22809);
        NcclDriver d = older.open();
        DriverStream s = d.createStream(0);
        DriverComm c = d.initRank(2, d.newUniqueId(), 0, 0, CommConfig.DEFAULT);
        MemoryBlock block = d.allocate(0, 4096, MemoryKind.COMMUNICATION);
        assertEquals(DriverConstants.WIN_COLL_SYMMETRIC, rma(c).oneSidedLimits().windowFlags());
        long window = rma(c).windowRegister(block, 0, 4096, DriverConstants.WIN_COLL_SYMMETRIC);
        older.ncclCalls();

        expectMissing(older, "ncclWinGetUserPtr", () -> rma(c).windowUserPointer(window));
        expectMissing(older, "ncclPutSignal", () -> rma(c).putSignal(new MemoryRef(block, 0), 1, DataType.INT8, 1, window, 0, 0, 0, s));
        expectMissing(older, "ncclSignal", () -> rma(c).signal(1, 0, 0, s));
        expectMissing(older, "ncclWaitSignal", () -> rma(c).waitSignal(new WaitDescriptor[] {new WaitDescriptor(1, 1, 0, 0)}, s));
        rma(c).windowDeregister(window);
        block.release();
        c.destroy();
        s.destroy();
    }

    private static void expectMissing(StubLibraries older, String function, Executable call) {
        UnsupportedFeatureException e = assertThrows(UnsupportedFeatureException.class, call);
        assertEquals(function, e.function());
        assertTrue(e.getMessage().contains(older.nccl.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("NCCL 2.28.9"), e.getMessage());
        assertTrue(e.getMessage().contains("NCCL 2.29.2"), e.getMessage());
        assertTrue(older.ncclCalls().stream().noneMatch(l -> l.startsWith(function)), "nothing called");
    }

    static org.jccl.core.spi.OneSidedComm rma(DriverComm c) {
        return java.util.Objects.requireNonNull(c.capability(org.jccl.core.spi.OneSidedComm.class));
    }
}
