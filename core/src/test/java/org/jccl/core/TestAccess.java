package org.jccl.core;

import org.jccl.core.spi.Driver;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;

/** Test access to package-private parts of the API, for engine and driver tests in other packages. */
public final class TestAccess {
    private TestAccess() {
    }

    /** A backend over {@code driver} (e.g. a scripted or stub-library driver). */
    public static Backend backend(Driver driver) {
        return new Backend(driver);
    }

    /** A buffer over {@code block}, owning it. */
    public static Buffer buffer(Driver driver, MemoryBlock block) {
        return new Buffer(driver, block);
    }

    /** The block under a buffer. */
    public static MemoryBlock block(Buffer buffer) {
        return buffer.block();
    }

    /** What a driver receives for {@code op}. */
    public static LaunchOp lower(Operation op) {
        return Lowering.lower(op);
    }
}
