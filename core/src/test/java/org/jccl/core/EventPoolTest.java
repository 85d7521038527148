package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.jccl.core.engine.EventPool;
import org.jccl.core.spi.DriverEvent;
import org.junit.jupiter.api.Test;

/** Completion events are pooled per device: a recycled event comes back only for its own device. */
class EventPoolTest {
    @Test
    void aRecycledEventIsTakenAgainOnlyOnItsOwnDevice() {
        EventPool pool = new EventPool(new ScriptedDriver());
        // The host device first, then devices out of order, so the pool grows more than once and keeps what it had.
        DriverEvent host = pool.take(-1);
        pool.recycle(host);
        DriverEvent two = pool.take(2);
        DriverEvent zero = pool.take(0);
        DriverEvent one = pool.take(1);
        assertEquals(2, two.device());
        pool.recycle(two);
        pool.recycle(zero);
        pool.recycle(one);
        DriverEvent three = pool.take(3);
        assertEquals(3, three.device(), "a device with nothing pooled gets a new event");
        assertSame(one, pool.take(1));
        assertSame(zero, pool.take(0));
        assertSame(two, pool.take(2));
        assertSame(host, pool.take(-1), "the host device's event survived the pool's growth");
        assertNotSame(host, pool.take(-1), "and was handed out once");
    }
}
