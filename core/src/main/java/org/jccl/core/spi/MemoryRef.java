package org.jccl.core.spi;

import java.util.Objects;

/**
 * A position in a backend's memory, as drivers receive it: the block (to reach host memory or check ownership)
 * and the byte offset into it.
 */
public record MemoryRef(MemoryBlock block, long offset) {
    public MemoryRef {
        Objects.requireNonNull(block, "block");
    }

    /** The address the library sees. */
    public long address() {
        return block.address() + offset;
    }
}
