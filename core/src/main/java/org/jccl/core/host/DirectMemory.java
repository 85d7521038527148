package org.jccl.core.host;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Direct memory freed when jccl says, not when the garbage collector gets to it. From JDK 22 through the
 * foreign-memory API (a shared {@code Arena} per allocation: closing it frees the memory, and a buffer used after
 * that throws instead of touching freed memory); before, through {@code sun.misc.Unsafe.invokeCleaner}, which JDK 24
 * and later warn about. The foreign-memory calls are made through method handles: jccl compiles for JDK 17.
 */
final class DirectMemory {
    private static final @Nullable Foreign FOREIGN = Runtime.version().feature() >= 22 ? Foreign.find() : null;
    private static final sun.misc.@Nullable Unsafe UNSAFE = FOREIGN == null ? findUnsafe() : null;

    private DirectMemory() {
    }

    /** Zeroed direct memory of {@code bytes} starting on an {@code alignment}-byte boundary, and how to free it. */
    interface Allocation {
        ByteBuffer buffer();

        /** Frees the memory now; the buffer must not be used after. Called once. */
        void free();
    }

    static Allocation allocate(int bytes, int alignment) {
        if (FOREIGN != null) return FOREIGN.allocate(bytes, alignment);
        ByteBuffer raw = ByteBuffer.allocateDirect(bytes + alignment);
        int misalignment = raw.alignmentOffset(0, alignment);
        ByteBuffer aligned = raw.slice(misalignment == 0 ? 0 : alignment - misalignment, bytes);
        return new Allocation() {
            public ByteBuffer buffer() {
                return aligned;
            }

            public void free() {
                if (UNSAFE != null) UNSAFE.invokeCleaner(raw); // else the garbage collector frees it
            }
        };
    }

    /** Which way memory is freed here, for messages and tests. */
    static String mechanism() {
        return FOREIGN != null ? "java.lang.foreign.Arena" : UNSAFE != null ? "sun.misc.Unsafe.invokeCleaner" : "the garbage collector";
    }

    /** {@code Arena.ofShared()}, {@code arena.allocate(bytes, alignment).asByteBuffer()}, {@code arena.close()}. */
    private record Foreign(MethodHandle ofShared, MethodHandle allocate, MethodHandle asByteBuffer, MethodHandle close) {
        static @Nullable Foreign find() {
            try {
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                Class<?> arena = Class.forName("java.lang.foreign.Arena");
                Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
                return new Foreign(lookup.findStatic(arena, "ofShared", MethodType.methodType(arena)),
                        lookup.findVirtual(arena, "allocate", MethodType.methodType(segment, long.class, long.class)),
                        lookup.findVirtual(segment, "asByteBuffer", MethodType.methodType(ByteBuffer.class)),
                        lookup.findVirtual(arena, "close", MethodType.methodType(void.class)));
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }

        Allocation allocate(int bytes, int alignment) {
            try {
                Object arena = ofShared.invoke();
                ByteBuffer buffer = (ByteBuffer) asByteBuffer.invoke(allocate.invoke(arena, (long) bytes, (long) alignment));
                return new Allocation() {
                    public ByteBuffer buffer() {
                        return buffer;
                    }

                    public void free() {
                        try {
                            close.invoke(arena);
                        } catch (Throwable t) {
                            throw new IllegalStateException("freeing host memory failed", t);
                        }
                    }
                };
            } catch (OutOfMemoryError e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("allocating " + bytes + " bytes of host memory failed", t);
            }
        }
    }

    private static sun.misc.@Nullable Unsafe findUnsafe() {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
