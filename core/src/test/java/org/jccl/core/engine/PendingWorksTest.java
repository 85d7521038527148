package org.jccl.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.jccl.core.spi.MemoryBlock;
import org.junit.jupiter.api.Test;

/** The pending set that links works through their own fields: order, removal anywhere, works of several sets. */
class PendingWorksTest {
    private static TrackedWork work(long sequence) {
        return new TrackedWork(sequence, new MemoryBlock[0], 0) {
            @Override
            public String describe() {
                return "work " + sequence;
            }
        };
    }

    private static List<Long> sequences(List<TrackedWork> works) {
        List<Long> out = new ArrayList<>();
        for (TrackedWork w : works) out.add(w.sequence());
        return out;
    }

    private static final PendingWorks.Selector ALL = (w, now) -> true;

    @Test
    void worksStayInAdmissionOrderWhereverOneIsRemoved() {
        PendingWorks pending = new PendingWorks();
        List<TrackedWork> works = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            works.add(work(i));
            pending.add(works.get(i - 1));
        }
        assertEquals(5, pending.size());
        assertTrue(pending.remove(works.get(2))); // the middle
        assertTrue(pending.remove(works.get(0))); // the first
        assertTrue(pending.remove(works.get(4))); // the last
        assertEquals(List.of(2L, 4L), sequences(pending.select(0, ALL)));
        assertFalse(pending.remove(works.get(2)), "removed once only");
        pending.add(works.get(2)); // admitted again after it left: linked at the end
        assertEquals(List.of(2L, 4L, 3L), sequences(pending.select(0, ALL)));
        for (TrackedWork w : List.of(works.get(1), works.get(3), works.get(2))) assertTrue(pending.remove(w));
        assertTrue(pending.isEmpty());
        assertNull(pending.select(0, ALL), "nothing to select");
    }

    @Test
    void aWorkOfSeveralCommunicatorsIsLinkedByTheFirstAndHeldByTheOthers() {
        PendingWorks first = new PendingWorks();
        PendingWorks second = new PendingWorks();
        TrackedWork shared = work(7);
        TrackedWork own = work(8);
        first.add(shared);
        second.add(shared);
        second.add(own);
        assertEquals(2, second.size());
        assertEquals(List.of(8L, 7L), sequences(second.select(0, ALL)), "linked ones first, then those held");
        assertTrue(second.remove(shared));
        assertEquals(List.of(7L), sequences(first.select(0, ALL)), "still linked in the first");
        assertFalse(second.remove(shared));
        assertTrue(first.remove(shared));
        assertEquals(List.of(8L), sequences(second.snapshot()));
        assertTrue(first.isEmpty());
    }

    @Test
    void aSelectorSeesEveryWorkAndTheTimeItWasGiven() {
        PendingWorks pending = new PendingWorks();
        for (int i = 1; i <= 4; i++) pending.add(work(i));
        List<Long> seenAt = new ArrayList<>();
        List<TrackedWork> even = pending.select(42, (w, now) -> {
            seenAt.add(now);
            return w.sequence() % 2 == 0;
        });
        assertEquals(List.of(2L, 4L), sequences(even));
        assertEquals(List.of(42L, 42L, 42L, 42L), seenAt);
        assertNull(pending.select(42, (w, now) -> false), "no list made when nothing matches");
    }
}
