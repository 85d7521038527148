package org.jccl.core;

import org.jspecify.annotations.Nullable;

/**
 * Sees every operation a communicator issues — collectives, point-to-point, groups and modules' operations, not
 * plain stream copies — once when it is issued and once when it completes: the hook metrics are built on
 * ({@code org.jccl.core.metrics.JcclMetrics} binds it to Micrometer). Registered process-wide with
 * {@link Jccl#addWorkObserver}; with none registered the engine calls nothing and records no time.
 *
 * <p>Both methods run on jccl's threads — {@link #issued} on the issuing thread, for one communicator while its
 * submit lock is held, {@link #completed} on the thread that completes the work, usually the event thread — so they
 * must be cheap and must never block. An exception thrown by an observer is logged and otherwise ignored.
 */
public interface WorkObserver {
    /** {@code work} was given its sequence number and is about to be queued for launch. */
    void issued(Work work);

    /**
     * {@code work} is about to complete: successfully when {@code error} is null, otherwise with {@code error} (a
     * refusal, a launch failure, a timeout, an abort, a remote error). Called before the work's dependents run, so
     * whoever waited for the work sees it counted.
     *
     * @param elapsedNanos the time since {@link #issued}
     */
    void completed(Work work, @Nullable Throwable error, long elapsedNanos);
}
