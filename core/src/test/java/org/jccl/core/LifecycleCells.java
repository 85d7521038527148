package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
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

    /** Waits for {@code f} to end either way, bounded: entering a state, the state matters, not the outcome. */
    public static void settle(CompletableFuture<?> f) {
        try {
            f.get(CELL_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // either way
        }
    }

    /** Makes a fresh world for one cell. */
    @FunctionalInterface
    public interface Setup<C> {
        C make() throws Exception;
    }

    /** Brings a cell's world into a state. */
    @FunctionalInterface
    public interface Enter<S, C> {
        void enter(S state, C cell) throws Exception;
    }

    /**
     * Makes every call in every state, each in a fresh world that {@code release} cleans up; prints the table under
     * {@code title} and fails, naming the broken cells, if any cell hung or ended untyped.
     */
    public static <S, C> void walk(String title, S[] states, Map<String, Function<C, CompletableFuture<?>>> calls,
                                   Setup<C> setup, Enter<S, C> enter, Consumer<C> release) throws Exception {
        List<String> table = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (S state : states) {
            for (Map.Entry<String, Function<C, CompletableFuture<?>>> call : calls.entrySet()) {
                C cell = setup.make();
                try {
                    enter.enter(state, cell);
                    String outcome = outcome(() -> call.getValue().apply(cell));
                    String row = state + " x " + call.getKey() + ": " + outcome;
                    table.add(row);
                    if (outcome.startsWith("HANG") || outcome.startsWith("UNTYPED")) broken.add(row);
                } finally {
                    release.accept(cell);
                }
            }
        }
        System.out.println("lifecycle table (" + title + "):\n" + String.join("\n", table));
        assertTrue(broken.isEmpty(), "cells that did not end cleanly: " + broken + "\nthe whole table:\n" + String.join("\n", table));
    }
}
