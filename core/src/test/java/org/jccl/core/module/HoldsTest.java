package org.jccl.core.module;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.Test;

class HoldsTest {
    @Test
    void closingWaitsForTheLastHoldAndRefusesNewOnes() throws Exception {
        Holds holds = new Holds("window");
        AutoCloseable first = holds.retention().retain();
        AutoCloseable second = holds.retention().retain();
        CompletableFuture<Void> closing = holds.closing();
        assertFalse(closing.isDone());
        InvalidUsageException refused = assertThrows(InvalidUsageException.class, () -> holds.retention().retain());
        assertTrue(refused.getMessage().contains("window is closed"), refused.getMessage());
        first.close();
        first.close(); // a handle releases once
        assertFalse(closing.isDone());
        assertEquals(1, holds.count());
        second.close();
        assertTrue(closing.isDone());
        assertEquals(0, holds.count());
        assertEquals(closing, holds.closing());
    }

    @Test
    void closingWithoutHoldsIsDoneAtOnce() {
        assertTrue(new Holds("x").closing().isDone());
    }

    @Test
    void allReleasesWhatItTookWhenOneIsRefused() throws Exception {
        Holds open = new Holds("open");
        Holds closed = new Holds("closed");
        closed.closing();
        Retention both = Retention.all(List.of(open.retention(), closed.retention()));
        assertThrows(InvalidUsageException.class, both::retain);
        assertEquals(0, open.count());
        List<Holds> three = List.of(new Holds("a"), new Holds("b"), new Holds("c"));
        AutoCloseable all = Retention.all(three.stream().map(Holds::retention).toList()).retain();
        for (Holds h : three) assertEquals(1, h.count());
        all.close();
        for (Holds h : three) assertEquals(0, h.count());
    }
}
