package org.jccl.core.host;

/**
 * How the ranks of one host communicator exchange data. {@link LocalClique} implements it for ranks that are
 * threads of one JVM (through shared memory); {@link NetworkClique} implements the same calls for ranks in other
 * processes. Every call may block the calling stream thread and throws {@link CliqueFailedException} once the
 * clique is poisoned (aborted or failed), so no rank hangs.
 */
interface HostTransport {
    /** The number of ranks. */
    int size();

    /** Runs one collective: every rank calls it with its own part, in the same order on every rank. */
    void collective(int rank, HostOp op);

    /** Makes {@code op}'s send buffer available to its peer without waiting; returns a handle for {@link #awaitConsumed}. */
    Object postSend(int rank, HostOp op);

    /** Waits until the peer has taken the data of a {@link #postSend}. */
    void awaitConsumed(int rank, Object posted);

    /** Waits for the matching send of {@code op}'s peer and copies its data into the receive buffer. */
    void receive(int rank, HostOp op);

    /** Fails every operation of every rank, now and later, with {@code reason}. */
    void poison(String reason);

    /**
     * {@code rank} closed its communicator: it leaves the transport (across processes: its connections, after
     * telling its peers). It takes part in nothing more, so a peer's wait for it fails at once instead of at its
     * timeout (see {@link #hasLeft}).
     */
    void close(int rank);

    /**
     * Whether {@code rank} closed its communicator. It did so only once its own operations had completed, so what
     * it sent before has arrived; whatever a peer still waits for from it never comes.
     */
    boolean hasLeft(int rank);

    /** The windows and signal counters of {@code rank}, one of this process's ranks. */
    HostWindows windowsOf(int rank);

    /**
     * Writes {@code bytes} of {@code source} into {@code peer}'s window {@code window} at {@code offset}, then counts
     * a signal from {@code from} there; returns once {@code source} may be reused. Called on {@code from}'s stream.
     */
    void put(int from, int peer, long window, long offset, HostMemoryBlock source, long sourceOffset, long bytes,
             int signal, int context);

    /** Counts a signal from {@code from} on {@code peer}, after {@code from}'s earlier puts to it. */
    void signal(int from, int peer, int signal, int context);

    /**
     * What {@code rank}'s stream is blocked on in an operation of this transport now — the ranks a collective waits
     * for, the peer a send or receive waits for — in words for a stall report or a timeout; null when it waits for
     * none of them. Any thread; must not block.
     */
    default @org.jspecify.annotations.Nullable String waitingFor(int rank) {
        return null;
    }

    /** Why the clique was poisoned, or null. */
    @org.jspecify.annotations.Nullable String poisoned();

    /**
     * The {@code ncclResult_t} every rank reports once the clique is poisoned: {@code ncclInvalidUsage} when the ranks
     * disagreed on an operation (a usage error on every rank, not only on the one that noticed), else
     * {@code ncclRemoteError}.
     */
    int poisonCode();
}
