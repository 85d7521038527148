package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.error.UnsupportedFeatureException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The device API on the host backend, which has none: refused before anything is issued, in words that fit a backend
 * without a library (no NCCL version to upgrade from or to).
 */
class DeviceApiHostTest {
    private List<Communicator> comms;

    @BeforeEach
    void open() throws Exception {
        comms = Jccl.backend(BackendKind.HOST).initAll(1).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() {
        comms.forEach(Communicator::close);
    }

    @Test
    void creationIsRefusedNamingTheHostBackendAndNoLibraryVersion() {
        DeviceCommRequirements requirements = DeviceCommRequirements.builder().lsaBarrierCount(1).build();
        UnsupportedFeatureException single = assertThrows(UnsupportedFeatureException.class,
                () -> DeviceApi.of(comms.get(0)).create(requirements));
        UnsupportedFeatureException together = assertThrows(UnsupportedFeatureException.class,
                () -> DeviceApi.createAll(comms, requirements));
        for (UnsupportedFeatureException e : List.of(single, together)) {
            assertEquals("ncclDevCommCreate", e.function());
            assertTrue(e.getMessage().contains("host backend"), e.getMessage());
            assertFalse(e.getMessage().matches(".*(version|NCCL \\d|2\\.\\d+\\.\\d).*"), e.getMessage());
        }
        assertEquals(0, comms.get(0).pendingCount(), "nothing was issued");
    }
}
