package org.jccl.core;

import org.jccl.core.spi.ForeignOwner;
import org.jspecify.annotations.Nullable;

/** The two ways {@link Backend#wrap} and {@link Backend#wrapWithRelease} learn who owns memory jccl did not allocate. */
final class ForeignOwners {
    private ForeignOwners() {
    }

    /**
     * Keeps {@code owner} strongly reachable until the last use ended, so the garbage collector cannot free the memory
     * under a running operation. An owner that can be freed explicitly and says so — a JavaCPP {@code Pointer} whose
     * {@code deallocate()} ran (its address becomes 0) — makes later operations fail before anything is enqueued.
     */
    static ForeignOwner keepAlive(Object owner) {
        return new ForeignOwner() {
            @Override
            public void release() {
                // Holding the owner was the whole job: once the block drops this object, the owner may go.
            }

            @Override
            public @Nullable String whyFreed() {
                return JavaCppOwner.whyFreed(owner);
            }

            @Override
            public String toString() {
                return "kept alive: " + owner.getClass().getName();
            }
        };
    }

    /** Runs {@code release} once when the last use ended. */
    static ForeignOwner callback(Runnable release) {
        return new ForeignOwner() {
            @Override
            public void release() {
                release.run();
            }

            @Override
            public String toString() {
                return "release callback";
            }
        };
    }

    /** Kept apart so that JavaCPP's class loads only when an owner may be one of its pointers. */
    private static final class JavaCppOwner {
        private static final @Nullable Class<?> POINTER = pointerClass();

        static @Nullable String whyFreed(Object owner) {
            if (POINTER == null || !POINTER.isInstance(owner)) return null;
            return ((org.bytedeco.javacpp.Pointer) owner).isNull()
                    ? "its owner, a JavaCPP " + owner.getClass().getSimpleName() + ", was deallocated (its address is 0)"
                    : null;
        }

        private static @Nullable Class<?> pointerClass() {
            try {
                return Class.forName("org.bytedeco.javacpp.Pointer", false, ForeignOwners.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                return null;
            }
        }
    }
}
