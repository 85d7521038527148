package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.jfr.JfrEvents;
import org.jccl.core.jfr.NcclActivity;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NCCL's profiler events as JFR events ({@code jccl.nccl.profiler=on}). jccl's JNI library is itself an NCCL profiler
 * plugin ({@code jccl_profiler.h}, interface version 5: NCCL 2.28 and later): before NCCL loads, this points
 * {@code NCCL_PROFILER_PLUGIN} at the library's own file, so NCCL's {@code dlopen} returns the library the JVM already
 * holds. The launch thread tags its library calls with the operation they belong to ({@link #attribute}), the plugin
 * records each event NCCL stops with that tag, and a daemon thread ({@code jccl-nccl-profiler}) drains the records every
 * 10 ms into {@link org.jccl.core.jfr.NcclActivityEvent}s. Where the plugin cannot work (RCCL, NCCL before 2.28, a
 * {@code NCCL_PROFILER_PLUGIN} of the user's, NCCL not loading it), a warning says why and nothing else changes.
 */
final class NcclProfiler {
    /** NCCL's events asked for: GroupApi, CollApi, P2pApi, KernelLaunch, Group, Coll, P2p, ProxyOp (no per-step events). */
    static final int EVENTS = 0x1 | 0x2 | 0x4 | 0x8 | 0x100 | 0x200 | 0x400 | 0x800;
    /** The first NCCL with the version 5 interface. */
    static final int FIRST_VERSION = 22800;
    private static final Logger LOG = LoggerFactory.getLogger(NcclProfiler.class);
    private static final int RECORD_BYTES = 128;
    private static final int BATCH = 256;
    private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final String[] KINDS = {"Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl", "KernelCh",
        "NetPlugin", "GroupApi", "CollApi", "P2pApi", "KernelLaunch"};

    /** Whether operations are tagged: set once the plugin is offered to NCCL, cleared if it cannot work. */
    private static volatile boolean active;
    private static boolean applied;
    private static boolean checked;
    private static final Map<String, Long> KEYS = new ConcurrentHashMap<>();
    private static final List<String> IDS = new CopyOnWriteArrayList<>();
    private static final AtomicLong DELIVERED = new AtomicLong();

    private NcclProfiler() {
    }

    /**
     * Once per process, before NCCL loads: with {@code jccl.nccl.profiler=on}, offers jccl's plugin to NCCL and starts
     * the thread that drains it. Leaves a {@code NCCL_PROFILER_PLUGIN} the user set in place, with a warning.
     *
     * @throws InvalidArgumentException if {@code jccl.nccl.profiler} is neither {@code on} nor {@code off}
     */
    static synchronized void applyIfAsked() {
        String mode = JcclSettings.NCCL_PROFILER.oneOf("on", "off");
        if (applied || mode.equals("off")) return;
        applied = true;
        if (NativeApi.jn_profiler_record_bytes() != RECORD_BYTES) {
            throw new IllegalStateException("jccl's profiler records are " + NativeApi.jn_profiler_record_bytes() + " bytes, not " + RECORD_BYTES);
        }
        String user = NativeApi.jn_getenv("NCCL_PROFILER_PLUGIN");
        if (user != null) {
            LOG.warn("jccl.nccl.profiler=on: NCCL_PROFILER_PLUGIN={} is set, so NCCL loads that plugin, not jccl's", user);
            return;
        }
        String library = NativeApi.jn_profiler_library();
        // NCCL copies the name into 255 bytes before it opens it.
        if (library == null || library.getBytes(StandardCharsets.UTF_8).length > 254) {
            LOG.warn("jccl.nccl.profiler=on: NCCL cannot load jccl's plugin: {}", library == null
                    ? "the loader does not say which file jccl's JNI library is" : "its path is over 254 bytes: " + library);
            return;
        }
        NativeApi.jn_profiler_enable(EVENTS);
        NativeApi.jn_setenv("NCCL_PROFILER_PLUGIN", library);
        active = true;
        Thread drain = new Thread(NcclProfiler::drainForever, "jccl-nccl-profiler");
        drain.setDaemon(true);
        drain.start();
        LOG.debug("NCCL's profiler events go to JFR (jccl.NcclActivity) through {}", library);
    }

    /**
     * After the library loaded: the plugin needs NCCL 2.28 or later. RCCL and older NCCL get a warning, and jccl stops
     * tagging operations.
     */
    static synchronized void loaded(boolean rccl, int version) {
        if (!active) return;
        String why = rccl ? "RCCL is loaded, and jccl's plugin speaks NCCL's profiler interface"
                : version < FIRST_VERSION ? "NCCL " + LibraryVersions.format(version) + " is older than "
                + LibraryVersions.format(FIRST_VERSION) + ", the first with profiler interface version 5" : null;
        if (why != null) stop(why);
    }

    /**
     * After a blocking communicator creation returned: NCCL initialised its profiler for it, so if jccl's plugin saw no
     * communicator at all, NCCL did not load it; says so once.
     */
    static synchronized void communicatorCreated() {
        if (!active || checked) return;
        checked = true;
        long[] counts = counts();
        if (counts[0] == 0) {
            stop("NCCL did not load it from NCCL_PROFILER_PLUGIN=" + NativeApi.jn_getenv("NCCL_PROFILER_PLUGIN")
                    + " (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV prints NCCL's reason)");
        }
    }

    private static void stop(String why) {
        active = false;
        NativeApi.jn_profiler_enable(0);
        LOG.warn("jccl.nccl.profiler=on: no NCCL profiler events: {}", why);
    }

    /** Whether operations are being tagged for the plugin. */
    static boolean active() {
        return active;
    }

    /**
     * On the launch thread: the calling thread's next library calls belong to operation {@code sequence} of
     * communicator {@code communicatorId}; null ends that.
     */
    static void attribute(@Nullable String communicatorId, long sequence) {
        if (!active) return;
        if (communicatorId == null) {
            NativeApi.jn_profiler_tag(-1, -1);
        } else {
            NativeApi.jn_profiler_tag(KEYS.computeIfAbsent(communicatorId, NcclProfiler::newKey), sequence);
        }
    }

    private static synchronized Long newKey(String communicatorId) {
        IDS.add(communicatorId);
        return (long) IDS.size() - 1;
    }

    /** {communicators the plugin was initialised for, records written, events or records dropped}. */
    static long[] counts() {
        long[] out = new long[3];
        NativeApi.jn_profiler_counts(out);
        return out;
    }

    /** Records drained and handed to JFR so far. */
    static long delivered() {
        return DELIVERED.get();
    }

    private static void drainForever() {
        byte[] batch = new byte[BATCH * RECORD_BYTES];
        ByteBuffer records = ByteBuffer.wrap(batch).order(ByteOrder.nativeOrder());
        long reportedDrops = 0;
        while (true) {
            int n = NativeApi.jn_profiler_drain(batch, BATCH);
            if (n > 0 && JfrEvents.ncclActivityWanted()) {
                long nowNanos = System.nanoTime();
                long nowMillis = System.currentTimeMillis();
                for (int i = 0; i < n; i++) JfrEvents.ncclActivity(decode(records, i * RECORD_BYTES, nowNanos, nowMillis));
            }
            DELIVERED.addAndGet(n);
            if (n < BATCH) {
                long dropped = counts()[2];
                if (dropped > reportedDrops) {
                    LOG.warn("jccl.nccl.profiler: {} NCCL profiler events lost so far (more than 8192 in flight or undrained)", dropped);
                    reportedDrops = dropped;
                }
                LockSupport.parkNanos(IDLE_NANOS);
            }
        }
    }

    /** The record at {@code at}: layout of {@code jp_record} in jccl_profiler.h. */
    static NcclActivity decode(ByteBuffer r, int at, long nowNanos, long nowMillis) {
        long start = r.getLong(at);
        long stop = r.getLong(at + 8);
        long key = r.getLong(at + 16);
        String communicator = key >= 0 && key < IDS.size() ? IDS.get((int) key) : "";
        int type = r.getInt(at + 56);
        return new NcclActivity(communicator, r.getLong(at + 24), kind(type), text(r, at + 72, 16), r.getLong(at + 48),
                text(r, at + 88, 16), r.getInt(at + 64), r.getInt(at + 68), text(r, at + 104, 12), text(r, at + 116, 12),
                r.getLong(at + 40), Long.toHexString(r.getLong(at + 32)), r.getInt(at + 60),
                nowMillis - TimeUnit.NANOSECONDS.toMillis(nowNanos - start), stop - start);
    }

    private static String kind(int type) {
        int bit = Integer.numberOfTrailingZeros(type);
        return Integer.bitCount(type) == 1 && bit < KINDS.length ? KINDS[bit] : "type " + type;
    }

    private static @Nullable String text(ByteBuffer r, int at, int size) {
        int n = 0;
        while (n < size && r.get(at + n) != 0) n++;
        if (n == 0) return null;
        byte[] b = new byte[n];
        r.get(at, b);
        return new String(b, StandardCharsets.US_ASCII);
    }
}
