package org.jccl.core.engine;

import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;

/**
 * A backend's completion events, pooled per device: one is recorded per work in flight, so the hot path creates
 * none once the pool is warm. Timing is disabled on them (cheaper to record and query).
 */
public final class EventPool {
    private final Driver driver;
    private @Nullable ArrayDeque<DriverEvent>[] pools;

    public EventPool(Driver driver) {
        this.driver = driver;
    }

    /** An event for {@code device}, from the pool or new. */
    public synchronized DriverEvent take(int device) {
        DriverEvent e = pool(device).pollLast();
        return e != null ? e : driver.createEvent(device, false);
    }

    /** Returns an event whose recorded work is complete. */
    public synchronized void recycle(DriverEvent event) {
        pool(event.device()).addLast(event);
    }

    @SuppressWarnings("unchecked")
    private ArrayDeque<DriverEvent> pool(int device) {
        int slot = device + 1; // the host device is -1
        ArrayDeque<DriverEvent>[] p = pools;
        if (p == null || slot >= p.length) {
            ArrayDeque<DriverEvent>[] grown = new ArrayDeque[slot + 1];
            int have = p == null ? 0 : p.length;
            if (p != null) System.arraycopy(p, 0, grown, 0, have);
            for (int i = have; i < grown.length; i++) grown[i] = new ArrayDeque<>();
            pools = p = grown;
        }
        return p[slot];
    }
}
