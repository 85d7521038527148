package org.jccl.device;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jccl.core.Backend;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.KernelRuntime;

/**
 * A loaded {@link KernelImage}: one load serves every device of the backend. Its kernels are found by name. Closing
 * unloads it once every launch of its kernels issued before has completed; launching after the close is refused.
 *
 * <pre>{@code
 * try (KernelLibrary library = KernelLibrary.load(backend, image)) {
 *     Kernel fill = library.kernel("fill");
 *     ...
 * }
 * }</pre>
 */
public final class KernelLibrary implements AutoCloseable {
    private final KernelRuntime runtime;
    private final long handle;
    private final String description;
    private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> unloaded = new CompletableFuture<>();
    private int pendingLaunches; // guarded by this
    private boolean closed; // guarded by this

    private KernelLibrary(KernelRuntime runtime, long handle, String description) {
        this.runtime = runtime;
        this.handle = handle;
        this.description = description;
    }

    /**
     * Loads {@code image} with {@code backend}'s driver API.
     *
     * @throws org.jccl.core.error.InvalidArgumentException   if the driver rejects the image
     * @throws org.jccl.core.error.UnsupportedFeatureException on a backend without kernels
     */
    public static KernelLibrary load(Backend backend, KernelImage image) {
        Errors.requireArgument(backend, "backend");
        Errors.requireArgument(image, "image");
        KernelRuntime runtime = backend.kernels();
        return new KernelLibrary(runtime, runtime.loadImage(image.bytes()), image.toString());
    }

    /**
     * The kernel {@code name} ({@code extern "C"} names are the plain ones).
     *
     * @throws org.jccl.core.error.InvalidArgumentException if the image has no such kernel
     */
    public Kernel kernel(String name) {
        Errors.requireArgument(name, "name");
        requireOpen();
        return kernels.computeIfAbsent(name, n -> {
            long k = runtime.kernel(handle, n);
            return new Kernel(this, n, k, runtime.parameterSizes(k));
        });
    }

    KernelRuntime runtime() {
        return runtime;
    }

    private synchronized void requireOpen() {
        if (closed) throw new InvalidUsageException(this + " is closed");
    }

    /** Counts a launch in flight, refusing it once closed. */
    synchronized void launchStarted() {
        requireOpen();
        pendingLaunches++;
    }

    void launchEnded() {
        boolean unload;
        synchronized (this) {
            unload = --pendingLaunches == 0 && closed;
        }
        if (unload) unload();
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /** Completes once unloaded. */
    public CompletableFuture<Void> unloaded() {
        return unloaded;
    }

    /** Unloads now, or after the last launch in flight completes. Idempotent. */
    @Override
    public void close() {
        boolean now;
        synchronized (this) {
            if (closed) return;
            closed = true;
            now = pendingLaunches == 0;
        }
        if (now) unload();
    }

    private void unload() {
        // Off the event thread (a launch's completion may trigger it): the driver call may wait for the device.
        CompletableFuture.runAsync(() -> runtime.unloadImage(handle)).whenComplete((v, error) -> {
            if (error == null) unloaded.complete(null); else unloaded.completeExceptionally(Errors.unwrap(error));
        });
    }

    @Override
    public String toString() {
        return "KernelLibrary(" + description + ")";
    }
}
