package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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

    @Test
    void aConnectionThatClosesWhileWaitingIsCleanedUp() {
        EmbeddedChannel ch = new EmbeddedChannel(new ServerConnection(state, TestServers.SECRET_BYTES, Duration.ofSeconds(10)));
        PayloadReader challenge = new PayloadReader(answer(ch).payload());
        challenge.u8();
        byte[] serverNonce = challenge.raw(Handshake.NONCE_BYTES);
        byte[] clientNonce = Handshake.nonce();
        byte[] proof = Handshake.clientProof(TestServers.SECRET_BYTES, serverNonce, clientNonce, 2, 4);
        ch.writeInbound(Frame.of(MessageType.JOIN, 0, new PayloadWriter().i32(2).i32(4).raw(clientNonce).raw(proof)));
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
}
