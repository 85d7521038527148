package org.jccl.device.kernels;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.jccl.core.Communicator;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.device.StubBackend;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.junit.jupiter.api.Test;

/** The shipped kernels' window ranges: offsets and sizes at the edges of a long are refused, typed, never wrapped. */
class KernelRangeTest {
    @Test
    void rangesThatWrapOrRunPastAWindowAreRefused() throws Exception {
        Communicator comm = StubBackend.communicator();
        OneSided rma = OneSided.of(comm);
        Window window = rma.register(rma.allocate(4096), WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
        try {
            long[][] bad = {{Long.MAX_VALUE, 16}, {16, Long.MAX_VALUE}, {Long.MAX_VALUE - 15, 16}, {4096, 16}, {0, 4097}};
            for (long[] r : bad) {
                InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                        () -> LsaAllToAll.requireInside(window, r[0], r[1]));
                assertTrue(e.getMessage().contains("overflows") || e.getMessage().contains("run past"), e.getMessage());
            }
            assertDoesNotThrow(() -> LsaAllToAll.requireInside(window, 4080, 16));
        } finally {
            window.closeAsync().get(30, TimeUnit.SECONDS);
        }
    }
}
