package org.jccl.core.module;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidUsageException;

/**
 * The holds steps have on a module's resource (a window, a device communicator): its close marks it closing at once
 * (no new hold, no new operation) and lets its release (a deregistration, a destruction) go ahead once the last hold
 * is released.
 */
public final class Holds {
    private final String what;
    private int count; // guarded by this
    private boolean closing; // guarded by this
    private final CompletableFuture<Void> unheld = new CompletableFuture<>();

    /** @param what the resource, for the refusal's message */
    public Holds(String what) {
        this.what = what;
    }

    /** A {@link Retention} taking a hold on the resource. */
    public Retention retention() {
        return this::take;
    }

    private AutoCloseable take() {
        synchronized (this) {
            if (closing) throw new InvalidUsageException(what + " is closed");
            count++;
        }
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) release();
        };
    }

    private void release() {
        boolean last;
        synchronized (this) {
            last = --count == 0 && closing;
        }
        if (last) unheld.complete(null);
    }

    /** Holds taken and not released. */
    public synchronized int count() {
        return count;
    }

    /** Marks the resource closing; the future completes once no hold is left (at once when none is). Idempotent. */
    public CompletableFuture<Void> closing() {
        boolean free;
        synchronized (this) {
            closing = true;
            free = count == 0;
        }
        if (free) unheld.complete(null);
        return unheld;
    }
}
