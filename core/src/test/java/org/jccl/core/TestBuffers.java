package org.jccl.core;

import org.jccl.core.spi.Driver;
import org.jccl.core.spi.MemoryBlock;

/** Test access to {@link Buffer}'s package-private constructor, for driver tests in other packages. */
public final class TestBuffers {
    private TestBuffers() {
    }

    /** A buffer over {@code block}, owning it. */
    public static Buffer wrap(Driver driver, MemoryBlock block) {
        return new Buffer(driver, block);
    }
}
