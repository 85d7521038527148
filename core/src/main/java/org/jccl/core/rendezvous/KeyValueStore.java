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
 *
 * <p>Bounded, so that a client (even one holding the secret, by mistake or malice) cannot exhaust the server's
 * memory: the UTF-8 bytes of every key plus the bytes of every value stay within {@code maxBytes}, and each
 * connection may have created at most {@code maxKeysPerOwner} of the keys present. A write that would pass either
 * limit throws {@link StoreLimitException} and changes nothing. A key counts against the connection that created
 * it until it is deleted or that connection ends (its keys then stay, counted in the total only).
 */
final class KeyValueStore {
    /** A value and the connection that created its key. */
    private record Entry(byte[] value, long owner) {
    }

    private final Map<String, Entry> entries = new HashMap<>();
    private final Map<Long, Integer> keysByOwner = new HashMap<>();
    private final long maxBytes;
    private final int maxKeysPerOwner;
    private long bytes;

    KeyValueStore(long maxBytes, int maxKeysPerOwner) {
        this.maxBytes = maxBytes;
        this.maxKeysPerOwner = maxKeysPerOwner;
    }

    @Nullable byte[] get(String key) {
        Entry e = entries.get(key);
        return e == null ? null : e.value;
    }

    boolean containsAll(Iterable<String> keys) {
        for (String k : keys) if (!entries.containsKey(k)) return false;
        return true;
    }

    /**
     * Stores value under key for owner (the writing connection).
     *
     * @throws StoreLimitException if it would pass a limit (nothing is changed)
     */
    void set(String key, byte[] value, long owner) {
        put(key, value, owner);
    }

    /**
     * Adds delta to the counter at key (absent counts as 0).
     *
     * @return the new value
     * @throws NumberFormatException if the stored value is not a decimal integer (nothing is changed)
     * @throws ArithmeticException   if the sum overflows (nothing is changed)
     * @throws StoreLimitException   if storing the sum would pass a limit (nothing is changed)
     */
    long add(String key, long delta, long owner) {
        byte[] old = get(key);
        long current = old == null ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII));
        long next = Math.addExact(current, delta);
        put(key, Long.toString(next).getBytes(StandardCharsets.US_ASCII), owner);
        return next;
    }

    /**
     * Sets key to desired if its value equals expected (null: if the key is absent).
     *
     * @return whether it was set
     * @throws StoreLimitException if it matches but storing desired would pass a limit (nothing is changed)
     */
    boolean compareAndSet(String key, byte @Nullable [] expected, byte[] desired, long owner) {
        byte[] current = get(key);
        boolean matches = expected == null ? current == null : current != null && Arrays.equals(current, expected);
        if (matches) put(key, desired, owner);
        return matches;
    }

    boolean delete(String key) {
        Entry e = entries.remove(key);
        if (e == null) return false;
        bytes -= keyBytes(key) + e.value.length;
        keysByOwner.computeIfPresent(e.owner, (o, n) -> n == 1 ? null : n - 1);
        return true;
    }

    /** The connection owner ended: its keys stay, but no longer count against any connection's limit. */
    void forgetOwner(long owner) {
        keysByOwner.remove(owner);
    }

    /** The bytes of every key (UTF-8) and value stored now. */
    long bytes() {
        return bytes;
    }

    /** How many of the keys present owner created. */
    int keysOf(long owner) {
        return keysByOwner.getOrDefault(owner, 0);
    }

    /** A sorted copy of the keys, for diagnostics and tests. */
    Set<String> keys() {
        return new TreeSet<>(entries.keySet());
    }

    private void put(String key, byte[] value, long owner) {
        Entry old = entries.get(key);
        long growth = old == null ? keyBytes(key) + value.length : (long) value.length - old.value.length;
        if (old == null && keysOf(owner) >= maxKeysPerOwner) {
            throw new StoreLimitException("this connection already created " + keysOf(owner)
                    + " keys, the most one connection may (maxKeysPerClient); delete some first");
        }
        if (growth > 0 && bytes + growth > maxBytes) {
            throw new StoreLimitException("storing " + growth + " more bytes would take the store past its limit of "
                    + maxBytes + " bytes of keys and values (maxStoreBytes; " + bytes + " in use)");
        }
        // A replaced key stays counted against the connection that created it.
        entries.put(key, new Entry(value, old == null ? owner : old.owner));
        bytes += growth;
        if (old == null) keysByOwner.merge(owner, 1, Integer::sum);
    }

    private static long keyBytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8).length;
    }
}
