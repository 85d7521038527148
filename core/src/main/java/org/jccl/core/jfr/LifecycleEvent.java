package org.jccl.core.jfr;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import org.jspecify.annotations.Nullable;

/**
 * One lifecycle call of a communicator, from the call to its future's completion: a creation ({@code initRank},
 * {@code initRankScalable}, {@code initAll}), {@code close}, {@code abort}, {@code revoke}, and every call a
 * communicator runs in issue order on its launch thread ({@code split}, {@code shrink}, {@code grow},
 * {@code register}, {@code createPreMulSum}, a module's set-up such as {@code ncclCommWindowRegister} or
 * {@code ncclDevCommDestroy}). Committed by the thread that completes the future, as it completes.
 */
@Name(LifecycleEvent.NAME)
@Label("jccl Communicator Lifecycle")
@Category("jccl")
@Description("A call that creates, splits, closes or aborts a communicator, or sets something up on it")
@StackTrace(false) // committed where the future completes, not where the call was made
public final class LifecycleEvent extends Event {
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "jccl.Lifecycle";

    @Label("Communicator")
    @Description("The communicator's id, shared by its ranks (comm=3f2a in messages)")
    String communicator;

    @Label("Rank")
    @Description("This rank; -1 for initAll, which makes every rank")
    int rank;

    @Label("Size")
    int size;

    @Label("Call")
    @Description("initRank, split, close, abort, ncclCommWindowRegister, ...")
    String call;

    @Label("Calling Thread")
    Thread caller;

    @Label("Reason")
    @Description("Why an abort was made: the cause every pending work fails with")
    @Nullable String reason;

    @Label("Outcome")
    @Description("success or error")
    String outcome;

    @Label("Exception")
    @Description("The exception the call failed with, if it failed")
    @Nullable Class<?> exception;

    private LifecycleEvent() {
    }

    /** Begins the event of {@code call} now and commits it once {@code result} completes, if the event is enabled. */
    static void record(String communicator, int rank, int size, String call, @Nullable String reason,
                       CompletableFuture<?> result) {
        LifecycleEvent e = new LifecycleEvent();
        if (!e.isEnabled()) return;
        e.begin();
        e.communicator = communicator;
        e.rank = rank;
        e.size = size;
        e.call = call;
        e.reason = reason;
        e.caller = Thread.currentThread();
        result.whenComplete((value, error) -> e.completed(error));
    }

    private void completed(@Nullable Throwable error) {
        end();
        if (!shouldCommit()) return;
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        outcome = cause == null ? "success" : "error";
        exception = cause == null ? null : cause.getClass();
        commit();
    }
}
