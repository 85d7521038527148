package org.jccl.device;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.module.StreamOperation;

/**
 * A kernel launch prepared for a {@link org.jccl.core.Step} ({@link DeviceApi#prepare}): its {@link #operation()} to
 * add to the step's builder, and the hold on the kernel's library that keeps the kernel loaded for the step's graph.
 * Close it once the step is closed; the library, if closed meanwhile, unloads then.
 */
public final class KernelLaunch implements AutoCloseable {
    private final StreamOperation operation;
    private final Runnable release;
    private final AtomicBoolean closed = new AtomicBoolean();

    KernelLaunch(StreamOperation operation, Runnable release) {
        this.operation = operation;
        this.release = release;
    }

    /** What {@code Step.Builder.add} (or {@code Group.add}) takes. */
    public StreamOperation operation() {
        return operation;
    }

    /** Lets the library unload once closed; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) release.run();
    }

    @Override
    public String toString() {
        return operation.what() + (closed.get() ? " (closed)" : "");
    }
}
