package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The server's shared state, driven on embedded channels (so time and the order of events are the test's): waiters
 * are answered once and forgotten, a closed connection's requests go with it.
 */
class ServerStateTest {
    private static final byte[] V1 = {1};
    private static final byte[] V2 = {2};
    private static final long OWNER = 1;

    private final ServerState state = new ServerState(4, new KeyValueStore(1 << 20, 100));

    private static Frame answer(EmbeddedChannel ch) {
        return assertInstanceOf(Frame.class, ch.readOutbound());
    }

    private static int errorCode(Frame f) {
        assertEquals(MessageType.ERROR, f.type());
        return new PayloadReader(f.payload()).u16();
    }

    @Test
    void aSatisfiedWaiterIsAnsweredOnceAndForgotten() {
        EmbeddedChannel ch = new EmbeddedChannel();
        state.awaitKeys(ch, 7, List.of("k"), true, Duration.ofSeconds(10));
        assertNull(ch.readOutbound());
        assertEquals(1, state.pendingRequests());

        state.store.set("k", V1, OWNER);
        state.keysChanged();
        Frame result = answer(ch);
        assertEquals(MessageType.RESULT, result.type());
        assertEquals(7, result.requestId());
        PayloadReader in = new PayloadReader(result.payload());
        assertEquals(1, in.u8());
        assertArrayEquals(V1, in.bytes());
        assertEquals(0, state.pendingRequests());

        // A later write of the same key answers nobody, and the waiter's deadline timer is gone.
        state.store.set("k", V2, OWNER);
        state.keysChanged();
        assertNull(ch.readOutbound());
        assertEquals(-1, ch.runScheduledPendingTasks(), "no timer left behind");
        ch.advanceTimeBy(20, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertNull(ch.readOutbound(), "no TIMEOUT after the answer");
        ch.finishAndReleaseAll();
    }

    @Test
    void aWaiterWhoseTimeRunsOutGetsTimeoutAndNothingLater() {
        EmbeddedChannel ch = new EmbeddedChannel();
        state.awaitKeys(ch, 3, List.of("a", "b"), false, Duration.ofSeconds(1));
        state.store.set("a", V1, OWNER);
        state.keysChanged();
        assertNull(ch.readOutbound(), "one of two keys is not enough");
        ch.advanceTimeBy(2, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        Frame timeout = answer(ch);
        assertEquals(3, timeout.requestId());
        assertEquals(ErrorCode.TIMEOUT.code, errorCode(timeout));
        assertEquals(0, state.pendingRequests());
        state.store.set("b", V1, OWNER);
        state.keysChanged();
        assertNull(ch.readOutbound());
        ch.finishAndReleaseAll();
    }

    @Test
    void forgettingAConnectionDropsItsWaitersArrivalsTimersAndMembership() {
        EmbeddedChannel gone = new EmbeddedChannel();
        EmbeddedChannel second = new EmbeddedChannel();
        EmbeddedChannel third = new EmbeddedChannel();
        state.admit(gone);
        state.awaitKeys(gone, 1, List.of("k"), true, Duration.ofSeconds(10));
        state.arrive(gone, 2, "b", 2, Duration.ofSeconds(10));
        assertEquals(2, state.pendingRequests());

        state.forget(gone);
        assertFalse(state.members().contains(gone));
        assertEquals(0, state.pendingRequests());
        assertEquals(-1, gone.runScheduledPendingTasks(), "its deadline timers are cancelled");

        state.store.set("k", V1, OWNER);
        state.keysChanged();
        assertNull(gone.readOutbound(), "its waiter is not answered");
        // Had its arrival stayed, this one would complete the barrier of two.
        state.arrive(second, 5, "b", 2, Duration.ofSeconds(10));
        assertNull(second.readOutbound());
        state.arrive(third, 6, "b", 2, Duration.ofSeconds(10));
        assertEquals(5, answer(second).requestId());
        assertEquals(6, answer(third).requestId());
        assertNull(gone.readOutbound());
        for (EmbeddedChannel ch : List.of(gone, second, third)) ch.finishAndReleaseAll();
    }

    /** A connection to the server that has answered the challenge as rank {@code rank} of {@code world}. */
    private EmbeddedChannel joining(int rank, int world) {
        EmbeddedChannel ch = new EmbeddedChannel(new ServerConnection(state, TestServers.SECRET_BYTES, Duration.ofSeconds(10)));
        PayloadReader challenge = new PayloadReader(answer(ch).payload());
        challenge.u8();
        byte[] serverNonce = challenge.raw(Handshake.NONCE_BYTES);
        byte[] clientNonce = Handshake.nonce();
        byte[] proof = Handshake.clientProof(TestServers.SECRET_BYTES, serverNonce, clientNonce, rank, world);
        ch.writeInbound(Frame.of(MessageType.JOIN, 0, new PayloadWriter().i32(rank).i32(world).raw(clientNonce).raw(proof)));
        return ch;
    }

    @Test
    void aJoinThatDisagreesWithTheJobsWorldSizeIsRefused() {
        EmbeddedChannel ch = joining(2, 5);
        Frame refusal = answer(ch);
        assertEquals(ErrorCode.BAD_REQUEST.code, errorCode(refusal));
        assertTrue(errorMessage(refusal).contains("differs from the job's 4"), errorMessage(refusal));
        ch.finishAndReleaseAll();
    }

    @Test
    void keysAlreadySetAreAnsweredAtOnce() {
        EmbeddedChannel ch = new EmbeddedChannel();
        state.store.set("k", V1, OWNER);
        state.awaitKeys(ch, 4, List.of("k"), false, Duration.ofSeconds(10));
        assertEquals(4, answer(ch).requestId());
        assertEquals(0, state.pendingRequests());
        ch.finishAndReleaseAll();
    }

    @Test
    void anArrivalThatDisagreesOnTheBarriersSizeIsRefused() {
        EmbeddedChannel ch = new EmbeddedChannel();
        state.arrive(ch, 1, "b", 3, Duration.ofSeconds(10));
        state.arrive(ch, 2, "b", 2, Duration.ofSeconds(10));
        Frame refusal = answer(ch);
        assertEquals(2, refusal.requestId());
        assertEquals(ErrorCode.BAD_REQUEST.code, errorCode(refusal));
        assertTrue(errorMessage(refusal).contains("has size 3, this arrival says 2"), errorMessage(refusal));
        assertEquals(1, state.pendingRequests());
        state.forget(ch);
        ch.finishAndReleaseAll();
    }

    @Test
    void aConnectionThatClosesWhileWaitingIsCleanedUp() {
        EmbeddedChannel ch = joining(2, 4);
        assertEquals(MessageType.JOINED, answer(ch).type());
        assertTrue(state.members().contains(ch));
        ch.writeInbound(Frame.of(MessageType.GET, 9, new PayloadWriter().string("later").i64(60_000)));
        ch.writeInbound(Frame.of(MessageType.BARRIER, 10, new PayloadWriter().string("b").i32(3).i64(60_000)));
        assertEquals(2, state.pendingRequests());

        ch.close(); // without LEAVE, as a killed process's connection ends

        assertEquals(0, state.pendingRequests());
        assertFalse(state.members().contains(ch));
        assertEquals(Set.of(2), state.ranks.dead());
        assertEquals(-1, ch.runScheduledPendingTasks(), "no handshake, deadline or other timer outlives it");
        ch.finishAndReleaseAll();
    }

    private static String errorMessage(Frame f) {
        PayloadReader in = new PayloadReader(f.payload());
        in.u16();
        return in.string();
    }

    @Test
    void everyConnectionGetsItsOwnId() {
        assertNotEquals(state.newConnectionId(), state.newConnectionId());
    }

    @Test
    void aCompletedBarrierLeavesNoTimerBehind() {
        EmbeddedChannel first = new EmbeddedChannel();
        EmbeddedChannel last = new EmbeddedChannel();
        state.arrive(first, 1, "b", 2, Duration.ofSeconds(1));
        state.arrive(last, 2, "b", 2, Duration.ofSeconds(1));
        assertEquals(MessageType.RESULT, answer(first).type());
        assertEquals(MessageType.RESULT, answer(last).type());
        assertEquals(-1, first.runScheduledPendingTasks(), "the first arrival's deadline is cancelled");
        first.advanceTimeBy(2, TimeUnit.SECONDS);
        first.runScheduledPendingTasks();
        assertNull(first.readOutbound(), "no TIMEOUT after the barrier completed");
        for (EmbeddedChannel ch : List.of(first, last)) ch.finishAndReleaseAll();
    }

    @Test
    void aTimedOutArrivalIsWithdrawnAndTheRestOfItsRoundStays() {
        EmbeddedChannel early = new EmbeddedChannel();
        EmbeddedChannel patient = new EmbeddedChannel();
        EmbeddedChannel late = new EmbeddedChannel();
        state.arrive(early, 1, "b", 3, Duration.ofSeconds(1));
        state.arrive(patient, 2, "b", 3, Duration.ofSeconds(60));
        early.advanceTimeBy(2, TimeUnit.SECONDS);
        early.runScheduledPendingTasks();
        Frame timeout = answer(early);
        assertEquals(ErrorCode.TIMEOUT.code, errorCode(timeout));
        assertTrue(errorMessage(timeout).contains("reached 2 of 3"), errorMessage(timeout));
        assertEquals(1, state.pendingRequests());
        // The round goes on with the arrival still waiting: two more complete it.
        state.arrive(late, 3, "b", 3, Duration.ofSeconds(60));
        state.arrive(late, 4, "b", 3, Duration.ofSeconds(60));
        assertEquals(2, answer(patient).requestId());
        assertEquals(3, answer(late).requestId());
        assertEquals(4, answer(late).requestId());
        for (EmbeddedChannel ch : List.of(early, patient, late)) ch.finishAndReleaseAll();
    }

    @Test
    void aBarrierNameIsFreeAgainOnceItsLastArrivalTimedOutOrLeft() {
        EmbeddedChannel alone = new EmbeddedChannel();
        EmbeddedChannel gone = new EmbeddedChannel();
        EmbeddedChannel next = new EmbeddedChannel();
        state.arrive(alone, 1, "timed", 2, Duration.ofSeconds(1));
        alone.advanceTimeBy(2, TimeUnit.SECONDS);
        alone.runScheduledPendingTasks();
        Frame timeout = answer(alone);
        assertTrue(errorMessage(timeout).contains("reached 1 of 2"), errorMessage(timeout));
        state.arrive(gone, 2, "left", 2, Duration.ofSeconds(60));
        state.forget(gone);
        // A new round of either name may have another size: no stale round of the old size is left to refuse it.
        state.arrive(next, 3, "timed", 3, Duration.ofSeconds(60));
        state.arrive(next, 4, "left", 3, Duration.ofSeconds(60));
        assertNull(next.readOutbound(), "both wait, neither is refused");
        assertEquals(2, state.pendingRequests());
        state.forget(next);
        for (EmbeddedChannel ch : List.of(alone, gone, next)) ch.finishAndReleaseAll();
    }

    @Test
    void forgettingOneConnectionKeepsEveryOtherConnectionsRequests() {
        EmbeddedChannel gone = new EmbeddedChannel();
        EmbeddedChannel staying = new EmbeddedChannel();
        EmbeddedChannel third = new EmbeddedChannel();
        state.admit(gone);
        state.admit(staying);
        state.awaitKeys(gone, 1, List.of("k"), false, Duration.ofSeconds(60));
        state.awaitKeys(staying, 2, List.of("k"), false, Duration.ofSeconds(60));
        state.arrive(gone, 3, "b", 3, Duration.ofSeconds(60));
        state.arrive(staying, 4, "b", 3, Duration.ofSeconds(60));
        state.forget(gone);
        assertEquals(Set.of(staying), state.members());
        assertEquals(2, state.pendingRequests());
        state.store.set("k", V1, OWNER);
        state.keysChanged();
        assertEquals(2, answer(staying).requestId());
        state.arrive(third, 5, "b", 3, Duration.ofSeconds(60));
        assertNull(staying.readOutbound(), "the forgotten arrival does not count towards three");
        state.arrive(third, 6, "b", 3, Duration.ofSeconds(60));
        assertEquals(4, answer(staying).requestId());
        assertNull(gone.readOutbound());
        for (EmbeddedChannel ch : List.of(gone, staying, third)) ch.finishAndReleaseAll();
    }
}
