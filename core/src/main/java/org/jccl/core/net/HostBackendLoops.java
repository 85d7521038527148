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
     * Makes the transport use loops from now on. It takes effect the next time the transport starts: at once when
     * no root or communicator spanning processes is open in this JVM, otherwise once the last of them has closed
     * (those keep the loops they started on).
     */
    public static void use(NetLoops loops) {
        current = Objects.requireNonNull(loops, "loops");
    }

    /** The loops the transport takes when it next starts. */
    public static NetLoops current() {
        return current;
    }
}
