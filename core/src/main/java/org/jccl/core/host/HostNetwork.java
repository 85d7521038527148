package org.jccl.core.host;

import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.net.HostBackendLoops;
import org.jccl.core.net.NetLoops;
import org.jspecify.annotations.Nullable;
import org.jccl.core.net.NettyDefaults;

/**
 * The process-wide Netty threads of the host backend's network transport, shared by every bootstrap root and
 * network clique: a lease on {@link HostBackendLoops#current()}, taken by the first user (and again when the
 * application names other loops) and given back when the last user is gone (jccl's own threads then stop, so none
 * outlives the communicators; an application's group is left running). Also how long an accepted connection has to
 * authenticate, and how many were refused and why; listeners bind where {@link ListenAddresses} says.
 */
final class HostNetwork {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final Object LOCK = new Object();
    /** The lease new users get, and the loops it came from. */
    private static NetLoops.@Nullable Lease current;
    private static @Nullable NetLoops currentFrom;
    /** Every lease taken since the transport was last idle, the current one included. */
    private static final List<NetLoops.Lease> LEASES = new ArrayList<>();
    private static int users;
    private static final AtomicLongArray REFUSALS = new AtomicLongArray(Refusal.values().length);

    /** Why a connection to a bootstrap root or a data port was dropped before it was admitted. */
    enum Refusal {
        /** A frame longer than {@link Wire#HANDSHAKE_MAX_FRAME}, refused on its length field alone. */
        OVERSIZED_FRAME,
        /** A first frame that is not a well-formed JOIN or HELLO, or an undecodable stream. */
        MALFORMED,
        /** A JOIN or HELLO with another communicator's token. */
        WRONG_TOKEN,
        /** A HELLO with the token for a rank that is out of range or already connected. */
        UNEXPECTED_RANK,
        /** Nothing admissible within {@link #handshakeTimeout()}. */
        HANDSHAKE_TIMEOUT
    }

    private HostNetwork() {
    }

    /**
     * The event loop group for a new root or clique: from the loops {@link HostBackendLoops#current()} names now.
     * Every acquire needs one {@link #release}.
     *
     * @throws IllegalStateException if those loops are an application's group that was shut down
     */
    static EventLoopGroup acquire() {
        synchronized (LOCK) {
            NetLoops wanted = HostBackendLoops.current();
            NetLoops.Lease l = current;
            if (l == null || currentFrom != wanted) {
                l = wanted.lease();
                current = l;
                currentFrom = wanted;
                LEASES.add(l);
            }
            users++;
            return l.group();
        }
    }

    /**
     * Gives back one {@link #acquire}; the last gives back every lease (jccl's own threads stop). A clique gives its
     * hold back without saying on which group, so a group stays leased until the whole transport is idle: a change
     * of loops never stops threads a root or clique still uses.
     */
    static void release() {
        synchronized (LOCK) {
            if (users == 0 || --users > 0) return;
            for (NetLoops.Lease l : LEASES) l.release();
            LEASES.clear();
            current = null;
            currentFrom = null;
        }
    }

    /** How long a connection to a root or a data port may take to present its JOIN or HELLO. */
    static Duration handshakeTimeout() {
        return JcclSettings.HOST_HANDSHAKE_TIMEOUT.duration();
    }

    /** Counts one refused connection (process-wide; the refusal is logged where it happens). */
    static void refused(Refusal why) {
        REFUSALS.incrementAndGet(why.ordinal());
    }

    /** How many connections this process refused for that reason so far, for diagnostics and tests. */
    static long refusals(Refusal why) {
        return REFUSALS.get(why.ordinal());
    }

    /** The number of holders of the shared threads, for tests. */
    static int users() {
        synchronized (LOCK) {
            return users;
        }
    }
}
