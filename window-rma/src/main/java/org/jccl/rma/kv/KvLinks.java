package org.jccl.rma.kv;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;

/**
 * Where KV receivers listen and senders find them: receivers of this process in a directory by communicator id and
 * rank (a direct hand-over, no network), and, when the options name a rendezvous, over TCP for senders in other
 * processes ({@link TcpKvLinks}, its address published in the rendezvous store).
 */
final class KvLinks {
    private static final Map<String, KvLink.Acceptor> IN_PROCESS = new ConcurrentHashMap<>();

    private KvLinks() {
    }

    /** A receiver's listening: undone by {@link #close()}. */
    static final class Listening implements AutoCloseable {
        private final String key;
        private final KvLink.Acceptor acceptor;
        private final TcpKvLinks.@Nullable Server server;

        private Listening(String key, KvLink.Acceptor acceptor, TcpKvLinks.@Nullable Server server) {
            this.key = key;
            this.acceptor = acceptor;
            this.server = server;
        }

        @Override
        public void close() {
            IN_PROCESS.remove(key, acceptor);
            if (server != null) server.close();
        }
    }

    static String key(String communicatorId, int rank) {
        return communicatorId + "/" + rank;
    }

    /** Starts listening for senders to {@code pool}'s rank. */
    static CompletableFuture<Listening> listen(KvPool pool, KvOptions options, KvLink.Acceptor acceptor) {
        String key = key(pool.communicator().id(), pool.communicator().rank());
        if (IN_PROCESS.putIfAbsent(key, acceptor) != null) {
            throw new InvalidUsageException(pool.communicator().describe() + " already has a KV receiver");
        }
        if (options.rendezvous() == null) return CompletableFuture.completedFuture(new Listening(key, acceptor, null));
        return TcpKvLinks.listen(options.rendezvous(), key, acceptor).handle((server, error) -> {
            if (error != null) {
                IN_PROCESS.remove(key, acceptor);
                throw new java.util.concurrent.CompletionException(error);
            }
            return new Listening(key, acceptor, server);
        });
    }

    /**
     * Connects {@code pool}'s rank to the receiver at {@code receiver}: in this process at once, else through the
     * rendezvous within the options' connect timeout.
     */
    static CompletableFuture<KvLink> connect(KvPool pool, int receiver, KvOptions options, KvLink.Handler handler) {
        String key = key(pool.communicator().id(), receiver);
        KvLink.Acceptor local = IN_PROCESS.get(key);
        if (local != null) return CompletableFuture.completedFuture(InProcess.pair(key, local, handler));
        if (options.rendezvous() == null) {
            return CompletableFuture.failedFuture(new InvalidUsageException("no KV receiver at rank " + receiver + " of "
                    + pool.communicator().describe() + " in this process, and no rendezvous to find one elsewhere"
                    + " (KvOptions.rendezvous)"));
        }
        return TcpKvLinks.connect(options.rendezvous(), key, options.connectTimeout(), handler);
    }

    /** Two ends in one process: a message sent on one end is handed straight to the other end's handler. */
    static final class InProcess implements KvLink {
        private final String name;
        private volatile @Nullable InProcess other;
        private volatile KvLink.@Nullable Handler handler;
        private final AtomicBoolean closed = new AtomicBoolean();

        private InProcess(String name) {
            this.name = name;
        }

        static KvLink pair(String key, KvLink.Acceptor receiverSide, KvLink.Handler senderHandler) {
            InProcess toReceiver = new InProcess("in-process link to " + key);
            InProcess toSender = new InProcess("in-process link from a sender to " + key);
            toReceiver.other = toSender;
            toSender.other = toReceiver;
            // Each end's handler takes what arrives at that end: the sender's end gets what the receiver sends.
            toReceiver.handler = senderHandler;
            toSender.handler = receiverSide.accept(toSender);
            return toReceiver;
        }

        @Override
        public void send(KvMessage message) {
            InProcess o = other;
            if (closed.get() || o == null || o.closed.get()) return;
            KvLink.Handler h = o.handler;
            if (h != null) h.received(message);
        }

        @Override
        public void close(String reason) {
            if (!closed.compareAndSet(false, true)) return;
            InProcess o = other;
            if (o != null && o.closed.compareAndSet(false, true)) {
                KvLink.Handler h = o.handler;
                if (h != null) h.lost(reason);
            }
        }

        @Override
        public String describe() {
            return name;
        }
    }
}
