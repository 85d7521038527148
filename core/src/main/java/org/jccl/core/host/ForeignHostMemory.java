package org.jccl.core.host;

import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.nccl.NativeMemory;
import org.jccl.core.spi.ForeignOwner;

/**
 * Host memory another library allocated, made usable by the host backend: a direct buffer over its real address.
 * Java has no supported way to turn an address into a buffer on JDK 17, so JavaCPP's JNI call does it (the same call
 * the GPU backends use for pinned memory, in jccl's own JNI library, which needs no GPU library); nothing is copied.
 */
final class ForeignHostMemory {
    private ForeignHostMemory() {
    }

    static HostMemoryBlock wrap(long address, long bytes, ForeignOwner owner) {
        if (bytes > Integer.MAX_VALUE) {
            throw new InvalidArgumentException("the host backend addresses at most " + Integer.MAX_VALUE
                    + " bytes per buffer, not " + bytes + ": wrap the memory in parts");
        }
        return HostMemoryBlock.foreign(address, NativeMemory.view(address, bytes), owner);
    }
}
