package org.jccl.core.nccl;

import static org.jccl.core.nccl.StubLibraries.field;
import static org.jccl.core.nccl.StubLibraries.single;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.jccl.core.CommConfig;
import org.jccl.core.ConfigField;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DriverComm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ncclConfig_t as libraries of several versions receive it. Offsets are NCCL's header written out by hand: header
 * 0..15, blocking 16, cgaClusterSize 20, minCTAs 24, maxCTAs 28, netName 32, splitShare 40, trafficClass 44,
 * commName 48, collnetEnable 56, CTAPolicy 60, shrinkShare 64, nvlsCTAs 68, nChannelsPerNetPeer 72,
 * nvlinkCentricSched 76, graphUsageMode 80, numRmaCtx 84.
 */
class ConfigVersionsTest {
    @TempDir
    Path dir;

    private byte[] configSeenBy(int version, CommConfig config) throws Exception {
        StubLibraries stubs = StubLibraries.build(Files.createDirectory(dir.resolve("v" + version)), version, false);
        NcclDriver driver = stubs.open();
        DriverComm comm = driver.initRank(2, driver.newUniqueId(), 0, 0, config);
        String line = single(stubs.ncclCalls(), "ncclCommInitRankConfig config");
        comm.destroy();
        return HexFormat.of().parseHex(field(line, "config"));
    }

    @Test
    void nccl2_23HasMembersUpToCommName() throws Exception {
        byte[] b = configSeenBy(22300, CommConfig.builder().set(ConfigField.SPLIT_SHARE, 1).build());
        ExpectedConfig.check(b, 22300, 56);
        assertEquals(1, ExpectedConfig.intAt(b, 40));
        assertEquals(Integer.MIN_VALUE, ExpectedConfig.intAt(b, 44), "trafficClass slot unset");
        assertEquals(0L, ExpectedConfig.longAt(b, 48), "commName NULL");
        assertEquals(0L, ExpectedConfig.longAt(b, 32), "netName NULL");
    }

    @Test
    void nccl2_29AddsGraphUsageModeAndRmaContexts() throws Exception {
        byte[] b = configSeenBy(22903, CommConfig.builder().set(ConfigField.NUM_RMA_CTX, 3).blocking(true).build());
        ExpectedConfig.check(b, 22903, 88);
        assertEquals(1, ExpectedConfig.intAt(b, 16), "blocking");
        assertEquals(Integer.MIN_VALUE, ExpectedConfig.intAt(b, 80), "graphUsageMode");
        assertEquals(3, ExpectedConfig.intAt(b, 84), "numRmaCtx");
    }

    @Test
    void aNewerLibraryGetsTheNewestLayoutJcclKnows() throws Exception {
        byte[] b = configSeenBy(23105, CommConfig.builder().set(ConfigField.NVLINK_CENTRIC_SCHED, 0).build());
        ExpectedConfig.check(b, ConfigLayout.NEWEST_DESCRIBED, 88);
        assertEquals(0, ExpectedConfig.intAt(b, 76));
        assertEquals(Integer.MIN_VALUE, ExpectedConfig.intAt(b, 72));
    }

    @Test
    void aMemberTheLibraryLacksIsRejectedBeforeAnyCall() throws Exception {
        StubLibraries stubs = StubLibraries.build(Files.createDirectory(dir.resolve("old")), 22300, false);
        NcclDriver driver = stubs.open();
        byte[] id = driver.newUniqueId();
        stubs.ncclCalls();
        UnsupportedFeatureException e = assertThrows(UnsupportedFeatureException.class,
                () -> driver.initRank(2, id, 0, 0, CommConfig.builder().set(ConfigField.NVLINK_CENTRIC_SCHED, 1).build()));
        assertEquals("ncclConfig_t.nvlinkCentricSched", e.function());
        assertTrue(e.getMessage().contains("2.23.0") && e.getMessage().contains("2.28.0"), e.getMessage());
        assertTrue(stubs.ncclCalls().isEmpty(), "nothing reached the library");
    }

    @Test
    void offsetsFollowTheHeader() {
        assertEquals(16, ConfigLayout.offsetOf(ConfigField.BLOCKING));
        assertEquals(32, ConfigLayout.offsetOf(ConfigField.NET_NAME));
        assertEquals(48, ConfigLayout.offsetOf(ConfigField.COMM_NAME));
        assertEquals(84, ConfigLayout.offsetOf(ConfigField.NUM_RMA_CTX));
        assertNotEquals(ConfigLayout.sizeFor(22800), ConfigLayout.sizeFor(22900));
        assertEquals(80, ConfigLayout.sizeFor(22809));
    }
}
