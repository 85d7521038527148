package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Addresses and buffers of native memory, through jccl's JNI library (which also carries JavaCPP's own natives, so
 * JavaCPP's {@code Pointer}s work once it is loaded). Needs no GPU library: the host backend uses it for memory
 * another library allocated.
 */
public final class NativeMemory {
    private NativeMemory() {
    }

    /** Loads jccl's JNI library, if not loaded yet; JavaCPP's {@code Pointer} and its subclasses work after it. */
    public static void load() {
        NativeApi.jn_nccl_function_count(); // any call initializes NativeApi, whose initializer loads the library
    }

    /** The address of a direct buffer's first byte (not its position's). */
    public static long addressOf(ByteBuffer direct) {
        load();
        return new Pointer(direct.duplicate().clear()).address();
    }

    /** A native-order buffer over {@code bytes} bytes the CPU may touch at {@code address}; nothing is copied. */
    public static ByteBuffer view(long address, long bytes) {
        load();
        // (The parameter is not named "address" inside the subclass: that name is Pointer's own field.)
        long at = address;
        Pointer pointer = new Pointer() {
            {
                this.address = at;
            }
        };
        return new BytePointer(pointer).capacity(bytes).limit(bytes).asByteBuffer().order(ByteOrder.nativeOrder());
    }
}
