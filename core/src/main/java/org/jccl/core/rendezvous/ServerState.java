package org.jccl.core.rendezvous;

import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Everything a server shares between connections: the store, the requests waiting for keys or at barriers, the
 * ranks, and the authenticated channels (to tell them of dead ranks). Touched only on the server's single event-loop
 * thread, so no locks; a waiting request holds a timer that answers TIMEOUT and forgets it, and a closed connection's
 * requests are dropped, so nothing outlives its connection or its deadline.
 */
final class ServerState {
    final KeyValueStore store;
    final RankRegistry ranks = new RankRegistry();
    private final Set<Channel> members = new LinkedHashSet<>();
    private final List<KeyWaiter> keyWaiters = new ArrayList<>();
    private final Map<String, Barrier> barriers = new HashMap<>();
    private final int worldSize;
    private long lastConnectionId;

    ServerState(int worldSize, KeyValueStore store) {
        this.worldSize = worldSize;
        this.store = store;
    }

    /** A number that no other connection of this server has, to attribute the keys it creates. */
    long newConnectionId() {
        return ++lastConnectionId;
    }

    /** The job's world size, or 0 if the server was not told (then joins are not range-checked). */
    int worldSize() {
        return worldSize;
    }

    void admit(Channel ch) {
        members.add(ch);
    }

    Set<Channel> members() {
        return members;
    }

    /** Answers with the value of keys[0] (when wantsValue) or an empty result once every key is set. */
    void awaitKeys(Channel ch, int requestId, List<String> keys, boolean wantsValue, Duration timeout) {
        if (store.containsAll(keys)) {
            answerKeys(ch, requestId, keys, wantsValue);
            return;
        }
        KeyWaiter w = new KeyWaiter(ch, requestId, keys, wantsValue);
        w.expiry = ch.eventLoop().schedule(() -> {
            if (keyWaiters.remove(w)) {
                ServerConnection.sendError(ch, requestId, ErrorCode.TIMEOUT,
                        "keys " + keys + " not set within " + timeout.toMillis() + " ms");
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        keyWaiters.add(w);
    }

    /** Called after any write: answers every waiter whose keys are now all set. */
    void keysChanged() {
        for (Iterator<KeyWaiter> it = keyWaiters.iterator(); it.hasNext(); ) {
            KeyWaiter w = it.next();
            if (store.containsAll(w.keys)) {
                it.remove();
                w.cancelExpiry();
                answerKeys(w.channel, w.requestId, w.keys, w.wantsValue);
            }
        }
    }

    private void answerKeys(Channel ch, int requestId, List<String> keys, boolean wantsValue) {
        PayloadWriter out = new PayloadWriter();
        if (wantsValue) {
            byte[] v = store.get(keys.get(0));
            out.u8(1).bytes(v == null ? new byte[0] : v);
        }
        ch.writeAndFlush(Frame.of(MessageType.RESULT, requestId, out));
    }

    /** Joins the barrier called name; all arrivals are answered when size of them have come. */
    void arrive(Channel ch, int requestId, String name, int size, Duration timeout) {
        Barrier b = barriers.computeIfAbsent(name, n -> new Barrier(size));
        if (b.size != size) {
            ServerConnection.sendError(ch, requestId, ErrorCode.BAD_REQUEST,
                    "barrier '" + name + "' has size " + b.size + ", this arrival says " + size);
            return;
        }
        Arrival a = new Arrival(ch, requestId);
        b.arrivals.add(a);
        if (b.arrivals.size() == b.size) {
            barriers.remove(name);
            for (Arrival each : b.arrivals) {
                each.cancelExpiry();
                each.channel.writeAndFlush(Frame.empty(MessageType.RESULT, each.requestId));
            }
            return;
        }
        a.expiry = ch.eventLoop().schedule(() -> {
            // Withdraw the arrival, so a later round of the same barrier name is not miscounted.
            if (b.arrivals.remove(a)) {
                if (b.arrivals.isEmpty()) barriers.remove(name, b);
                ServerConnection.sendError(ch, requestId, ErrorCode.TIMEOUT, "barrier '" + name + "' reached "
                        + (b.arrivals.size() + 1) + " of " + size + " within " + timeout.toMillis() + " ms");
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The requests waiting for keys or at barriers, for diagnostics and tests. */
    int pendingRequests() {
        int n = keyWaiters.size();
        for (Barrier b : barriers.values()) n += b.arrivals.size();
        return n;
    }

    /** Forgets everything a closed connection was waiting for. */
    void forget(Channel ch) {
        members.remove(ch);
        keyWaiters.removeIf(w -> {
            if (w.channel != ch) return false;
            w.cancelExpiry();
            return true;
        });
        barriers.values().removeIf(b -> {
            b.arrivals.removeIf(a -> {
                if (a.channel != ch) return false;
                a.cancelExpiry();
                return true;
            });
            return b.arrivals.isEmpty();
        });
    }

    /** Tells every member that rank died. */
    void announceDead(int rank) {
        for (Channel m : members) m.writeAndFlush(Frame.of(MessageType.RANK_DEAD, 0, new PayloadWriter().i32(rank)));
    }

    /** A request waiting until keys are set. */
    private static final class KeyWaiter extends Timed {
        final List<String> keys;
        final boolean wantsValue;

        KeyWaiter(Channel channel, int requestId, List<String> keys, boolean wantsValue) {
            super(channel, requestId);
            this.keys = keys;
            this.wantsValue = wantsValue;
        }
    }

    /** One request waiting at a barrier. */
    private static final class Arrival extends Timed {
        Arrival(Channel channel, int requestId) {
            super(channel, requestId);
        }
    }

    /** The arrivals of one round of a barrier. */
    private static final class Barrier {
        final int size;
        final List<Arrival> arrivals = new ArrayList<>();

        Barrier(int size) {
            this.size = size;
        }
    }

    /** A pending request and its expiry timer. */
    private abstract static class Timed {
        final Channel channel;
        final int requestId;
        @Nullable ScheduledFuture<?> expiry;

        Timed(Channel channel, int requestId) {
            this.channel = channel;
            this.requestId = requestId;
        }

        void cancelExpiry() {
            if (expiry != null) expiry.cancel(false);
        }
    }
}
