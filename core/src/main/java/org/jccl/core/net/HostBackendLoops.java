package org.jccl.core.net;

import java.util.Objects;

/**
 * Which event loops the host backend's network transport runs on (bootstrap roots and the connections between
 * ranks in several processes). By default {@link #DEFAULT}: up to 4 daemon threads {@code jccl-host-net-*}, started
 * with the first root or communicator spanning processes and stopped when the last one closes.
 *
 * <p>An application that already runs Netty may lend its own group before creating host communicators:
 * {@code HostBackendLoops.use(NetLoops.of(myGroup))}. jccl then never shuts that group down.
 */
public final class HostBackendLoops {
    /** jccl's own threads: as many as cores, at least 2 and at most 4. */
    public static final NetLoops DEFAULT =
            NetLoops.owned("jccl-host-net", Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors())));

    private static volatile NetLoops current = DEFAULT;

    private HostBackendLoops() {
    }

    /**
     * Makes the transport use loops from now on: roots and communicators spanning processes opened later run on
     * them; those open now keep the loops they started on, which stay leased (jccl's own threads running) until no
     * root or communicator of the transport is open.
     */
    public static void use(NetLoops loops) {
        current = Objects.requireNonNull(loops, "loops");
    }

    /** The loops that new roots and communicators spanning processes run on. */
    public static NetLoops current() {
        return current;
    }
}
