package org.jccl.core.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Host memory: aligned, zeroed, usable, freed on demand by the mechanism the running JDK offers without warnings. */
class DirectMemoryTest {
    @Test
    void memoryIsAlignedZeroedAndFreedByTheJdksOwnMechanism() {
        DirectMemory.Allocation a = DirectMemory.allocate(1000, 64);
        ByteBuffer b = a.buffer();
        assertEquals(1000, b.capacity());
        assertEquals(0, b.alignmentOffset(0, 64));
        for (int i = 0; i < b.capacity(); i++) assertEquals(0, b.get(i));
        b.putLong(992, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, b.getLong(992));
        a.free();
        assertEquals(Runtime.version().feature() >= 22 ? "java.lang.foreign.Arena" : "sun.misc.Unsafe.invokeCleaner",
                DirectMemory.mechanism(), "JDK 22+ frees through the foreign-memory API, which JDK 24+ does not warn about");
    }
}
