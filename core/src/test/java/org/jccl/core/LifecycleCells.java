package org.jccl.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.core.error.JcclException;

/**
 * One cell of a lifecycle table: a call made in some state must end, within seconds, in a result, a typed
 * {@link JcclException} thrown at once, or a future failed with one — never hang or escape untyped.
 */
public final class LifecycleCells {
    /** How long one cell may take. */
    public static final long CELL_SECONDS = 10;

    private LifecycleCells() {
    }

    /** A call that returns a future, or throws at once. */
    @FunctionalInterface
    public interface Call {
        CompletableFuture<?> make();
    }

    /** "ok", "refused: Type" (thrown at once), "failed: Type" (the future), "HANG" or "UNTYPED: …". */
    public static String outcome(Call call) {
        CompletableFuture<?> f;
        try {
            f = call.make();
        } catch (JcclException e) {
            return "refused: " + e.getClass().getSimpleName();
        } catch (RuntimeException e) {
            return "UNTYPED (thrown): " + e;
        }
        try {
            f.get(CELL_SECONDS, TimeUnit.SECONDS);
            return "ok";
        } catch (TimeoutException e) {
            return "HANG";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            while (cause instanceof CompletionException && cause.getCause() != null) cause = cause.getCause();
            return cause instanceof JcclException ? "failed: " + cause.getClass().getSimpleName() : "UNTYPED: " + cause;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "UNTYPED: interrupted";
        }
    }

    /** Whether an outcome breaks the rule. */
    public static boolean broken(String outcome) {
        return outcome.startsWith("HANG") || outcome.startsWith("UNTYPED");
    }

    /** Waits for {@code f} to end either way, bounded: entering a state, the state matters, not the outcome. */
    public static void settle(CompletableFuture<?> f) {
        try {
            f.get(CELL_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // either way
        }
    }

    /** The failure message: the broken cells, then the whole table. */
    public static String report(List<String> broken, List<String> table) {
        return "cells that did not end cleanly: " + broken + "\nthe whole table:\n" + String.join("\n", table);
    }
}
