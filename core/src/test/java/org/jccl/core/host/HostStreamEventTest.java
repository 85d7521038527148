package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.junit.jupiter.api.Test;

/** The host driver's runtime half at the SPI: memory, stream order, event generations, the wake hook. */
class HostStreamEventTest {
    private final HostDriver driver = new HostDriver();

    private static void block(HostStream s, CountDownLatch gate) {
        s.enqueue(() -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @Test
    void aWaitSeesTheGenerationRecordedAtCallTimeNotALaterRerecord() {
        HostStream a = (HostStream) driver.createStream(0);
        HostStream b = (HostStream) driver.createStream(0);
        AtomicInteger wakes = new AtomicInteger();
        driver.onEventCompleted(wakes::incrementAndGet);
        DriverEvent e = driver.createEvent(0, false);
        assertEquals(DriverConstants.EVENT_DONE, e.query(), "never recorded: done");
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch second = new CountDownLatch(1);
        block(a, first);
        e.record(a);
        b.waitEvent(e);
        AtomicBoolean ranAfterWait = new AtomicBoolean();
        b.enqueue(() -> ranAfterWait.set(true));
        block(a, second);
        e.record(a); // a new generation, behind the second gate
        assertEquals(DriverConstants.EVENT_PENDING, e.query());
        first.countDown();
        await().atMost(Duration.ofSeconds(10)).untilTrue(ranAfterWait);
        assertEquals(DriverConstants.EVENT_PENDING, e.query(), "the re-recorded generation is still pending");
        second.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> e.query() == DriverConstants.EVENT_DONE);
        assertTrue(wakes.get() >= 2, "each completion wakes the event thread");
        a.destroy();
        b.destroy();
    }

    @Test
    void tasksRunInOrderAndDestroyLetsQueuedTasksFinish() {
        HostStream s = (HostStream) driver.createStream(0);
        StringBuilder order = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            int n = i;
            s.enqueue(() -> order.append(n));
        }
        s.synchronize();
        assertEquals("01234", order.toString());
        CountDownLatch gate = new CountDownLatch(1);
        block(s, gate);
        AtomicBoolean last = new AtomicBoolean();
        s.enqueue(() -> last.set(true));
        s.destroy();
        assertThrows(InvalidUsageException.class, () -> s.enqueue(() -> { }));
        gate.countDown();
        await().atMost(Duration.ofSeconds(10)).untilTrue(last);
    }

    @Test
    void wrappedStreamsShareTheExecutorButAreNotDestroyedByTheWrapper() {
        HostStream s = (HostStream) driver.createStream(0);
        DriverStream wrapped = driver.wrapStream(0, s.handle());
        assertEquals(s.handle(), wrapped.handle());
        wrapped.destroy();
        AtomicBoolean ran = new AtomicBoolean();
        s.enqueue(() -> ran.set(true));
        wrapped.synchronize();
        assertTrue(ran.get());
        s.destroy();
        assertThrows(InvalidArgumentException.class, () -> driver.wrapStream(0, s.handle()));
    }

    @Test
    void memoryIsAlignedDistinctAndFreedOnLastRelease() {
        MemoryBlock a = driver.allocate(0, 1000, MemoryKind.DEVICE);
        MemoryBlock b = driver.allocate(0, 1000, MemoryKind.PINNED_HOST);
        assertEquals(DriverConstants.HOST_DEVICE, a.device());
        assertTrue(b.address() >= a.address() + a.size() || a.address() >= b.address() + b.size(), "no overlap");
        assertEquals(0, a.address() % 4096);
        ByteBuffer view = a.hostView();
        assertEquals(1000, view.capacity());
        assertEquals(java.nio.ByteOrder.nativeOrder(), view.order());
        assertEquals(0, ((HostMemoryBlock) a).bytes().alignmentOffset(0, 64));
        view.put(0, (byte) 9);
        ByteBuffer out = ByteBuffer.allocate(1);
        driver.read(a, 0, out);
        assertEquals(9, out.get(0));
        assertNotEquals(a.address(), b.address());
        a.release();
        b.release();
        assertTrue(a.isFreed());
        assertThrows(IllegalStateException.class, a::hostView);
        assertThrows(InvalidArgumentException.class, () -> driver.read(a, 0, ByteBuffer.allocate(1)));
        assertThrows(InvalidArgumentException.class, () -> driver.allocate(0, 0, MemoryKind.DEVICE));
        assertFalse(driver.features().present().isEmpty());
    }

    @Test
    void timingEventsMeasureElapsedTime() {
        HostStream s = (HostStream) driver.createStream(0);
        DriverEvent start = driver.createEvent(0, true);
        DriverEvent end = driver.createEvent(0, true);
        start.record(s);
        s.enqueue(() -> {
            long until = System.nanoTime() + 2_000_000;
            while (System.nanoTime() < until) Thread.onSpinWait();
        });
        end.record(s);
        end.synchronize();
        assertTrue(end.elapsedMillisSince(start) >= 1.5f);
        s.destroy();
    }
}
