package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jccl.core.spi.Feature;
import org.junit.jupiter.api.Test;

/** Value types print what they hold, not {@code ClassName@hash}. */
class ValueTypesPrintTest {
    @Test
    void featuresNameTheLibraryAndWhatIsPresentAndAbsent() {
        String s = Jccl.backend(BackendKind.HOST).features().toString();
        assertTrue(s.startsWith("Features[the host backend (pure Java): "), s);
        assertTrue(s.contains(Feature.PUT_SIGNAL.name()), s);
        assertTrue(s.contains("absent: "), s);
        assertFalse(s.contains("@"), s);
    }

    @Test
    void buffersAndTheirMemoryBlocksSayWhatTheyAre() {
        try (Buffer b = Jccl.backend(BackendKind.HOST).allocate(0, 64)) {
            assertTrue(b.toString().startsWith("Buffer[64 bytes, device -1, device"), b.toString());
            assertTrue(b.block().toString().startsWith("MemoryBlock[64 bytes at 0x"), b.block().toString());
        }
    }

    @Test
    void eventsSayWhetherTheyAreClosed() {
        Event e = Jccl.backend(BackendKind.HOST).createEvent(0, false);
        assertTrue(e.toString().startsWith("Event["), e.toString());
        e.close();
        assertTrue(e.toString().endsWith(", closed]"), e.toString());
    }
}
