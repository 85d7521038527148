package org.jccl.core.rendezvous;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The server's keys and values. Confined to the server's one event-loop thread, so it needs no locks. Counters
 * ({@link #add}) are stored as decimal ASCII text, so any client can read them as strings.
 */
final class KeyValueStore {
    private final Map<String, byte[]> values = new HashMap<>();

    @Nullable byte[] get(String key) {
        return values.get(key);
    }

    boolean containsAll(Iterable<String> keys) {
        for (String k : keys) if (!values.containsKey(k)) return false;
        return true;
    }

    void set(String key, byte[] value) {
        values.put(key, value);
    }

    /**
     * Adds delta to the counter at key (absent counts as 0).
     *
     * @return the new value
     * @throws NumberFormatException if the stored value is not a decimal integer (nothing is changed)
     */
    long add(String key, long delta) {
        byte[] old = values.get(key);
        long current = old == null ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII));
        long next = Math.addExact(current, delta);
        values.put(key, Long.toString(next).getBytes(StandardCharsets.US_ASCII));
        return next;
    }

    /**
     * Sets key to desired if its value equals expected (null: if the key is absent).
     *
     * @return whether it was set
     */
    boolean compareAndSet(String key, byte @Nullable [] expected, byte[] desired) {
        byte[] current = values.get(key);
        boolean matches = expected == null ? current == null : current != null && Arrays.equals(current, expected);
        if (matches) values.put(key, desired);
        return matches;
    }

    boolean delete(String key) {
        return values.remove(key) != null;
    }

    /** A sorted copy of the keys, for diagnostics and tests. */
    Set<String> keys() {
        return new TreeSet<>(values.keySet());
    }
}
