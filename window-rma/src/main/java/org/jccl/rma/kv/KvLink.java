package org.jccl.rma.kv;

/**
 * One KV sender's control link to one KV receiver, seen from either end: messages in order, never blocking the caller.
 * Between processes a TCP connection ({@link TcpKvLinks}); between ranks of one process a direct hand-over.
 */
interface KvLink {
    /** Sends {@code message} after those sent before; dropped once the link is closed or lost. */
    void send(KvMessage message);

    /** Closes the link; the other end sees it lost with {@code reason}. Idempotent. */
    void close(String reason);

    /** What the link connects, for messages. */
    String describe();

    /** What an end does with what arrives: called in order, from one thread at a time. */
    interface Handler {
        void received(KvMessage message);

        /** The link is gone (the peer closed it, died or stopped answering); nothing more arrives. Called once. */
        void lost(String why);
    }

    /** A receiver's side: a handler for each sender that connects. */
    interface Acceptor {
        Handler accept(KvLink toSender);
    }
}
