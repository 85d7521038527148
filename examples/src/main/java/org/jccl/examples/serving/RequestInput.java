package org.jccl.examples.serving;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Query parameters as every service reads them, so that one input means the same everywhere: a bad value is an
 * {@link IllegalArgumentException} (the route answers 400 with its message), and what a message repeats of the input
 * is cut short, so a 400 never echoes a client's megabyte back.
 */
public final class RequestInput {
    /** The longest deadline or simulated compute time a request may ask for. */
    public static final long MAX_MILLIS = 60_000;
    /** How much of an input a message repeats. */
    static final int ECHO_LIMIT = 40;

    private RequestInput() {
    }

    /** The first value of {@code name}, or {@code fallback} when absent; absent without fallback is refused. */
    public static String param(QueryStringDecoder query, String name, @Nullable String fallback) {
        List<String> values = query.parameters().get(name);
        if (values != null && !values.isEmpty()) return values.get(0);
        if (fallback == null) throw new IllegalArgumentException("missing parameter " + name);
        return fallback;
    }

    /**
     * The request's deadline, {@code timeoutMs}: absent, {@code fallback}; else 1 to {@value #MAX_MILLIS} ms. Zero is
     * refused rather than answered 504 at once: a deadline must be positive.
     */
    public static Duration timeout(QueryStringDecoder query, Duration fallback) {
        List<String> values = query.parameters().get("timeoutMs");
        if (values == null || values.isEmpty()) return fallback;
        return Duration.ofMillis(millis(values.get(0), "timeoutMs", 1));
    }

    /** {@code text} as a number of milliseconds from {@code min} to {@value #MAX_MILLIS}. */
    public static long millis(String text, String name, long min) {
        long v;
        try {
            v = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " is not a number of milliseconds: " + echo(text), e);
        }
        if (v < min || v > MAX_MILLIS) {
            throw new IllegalArgumentException(name + " must be within " + min + ".." + MAX_MILLIS + ", not " + v
                    + (min > 0 && v <= 0 ? " (a deadline must be positive)" : ""));
        }
        return v;
    }

    /** {@code input} quoted for a message, cut to {@value #ECHO_LIMIT} characters with its full length named. */
    public static String echo(String input) {
        if (input.length() <= ECHO_LIMIT) return "'" + input + "'";
        return "'" + input.substring(0, ECHO_LIMIT) + "...' (" + input.length() + " characters)";
    }
}
