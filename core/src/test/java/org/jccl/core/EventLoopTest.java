package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.engine.EventLoop;
import org.junit.jupiter.api.Test;

/**
 * The event thread's rounds on the scripted driver: more streams with pending work than its first batch holds, the
 * count of works it saw complete, and watches polled until they finish (or fail) and never after.
 */
class EventLoopTest extends ScriptedEngineFixture {
    private static final int STREAMS = 40;

    /** Forty streams' heads are polled in one call each round, and every work completes once its event has. */
    @Test
    void moreStreamsThanTheFirstBatchArePolledTogetherAndComplete() {
        Buffer src = buffer(64);
        Buffer dst = buffer(64);
        List<Stream> streams = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        long before = EventLoop.get().completedCount();
        try {
            for (int i = 0; i < STREAMS; i++) {
                Stream s = backend.createStream(-1);
                streams.add(s);
                works.add(s.copy(dst, src, 64));
            }
            await().atMost(WAIT).until(() -> driver.largestPoll.get() >= STREAMS);
            assertTrue(works.stream().noneMatch(Work::isDone), "no event completed yet");
            driver.done.addAll(driver.events.keySet());
            for (Work w : works) w.join();
            assertTrue(EventLoop.get().completedCount() - before >= STREAMS, "every completion is counted");
        } finally {
            streams.forEach(Stream::close);
        }
    }

    /** A watch is polled each round until it says it finished, then never again; one that throws is dropped. */
    @Test
    void aWatchIsPolledUntilItFinishesAndAFailingOneIsDropped() {
        Communicator c = comm();
        AtomicInteger polls = new AtomicInteger();
        AtomicInteger failingPolls = new AtomicInteger();
        Modules.context(c).watch(() -> polls.incrementAndGet() >= 3);
        Modules.context(c).watch(() -> {
            failingPolls.incrementAndGet();
            throw new IllegalStateException("a watch that fails");
        });
        await().atMost(WAIT).until(() -> polls.get() >= 3 && failingPolls.get() >= 1);
        await().during(Duration.ofMillis(100)).atMost(WAIT).until(() -> polls.get() == 3 && failingPolls.get() == 1);
    }

    /** The event thread is a daemon: an application that forgets to close a communicator still exits. */
    @Test
    void theEventThreadIsADaemon() {
        comm();
        assertTrue(EventLoop.get().thread().isDaemon());
        assertEquals("jccl-event", EventLoop.get().thread().getName());
    }
}
