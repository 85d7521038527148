package org.jccl.core.rendezvous;

import org.jspecify.annotations.Nullable;

/** Why the server refused a request or a join; the code travels in ERROR frames. */
public enum ErrorCode {
    /** The operation's time ran out before its condition held (keys, barrier). */
    TIMEOUT(1),
    /** The join's proof of the shared secret was wrong. */
    AUTHENTICATION_FAILED(2),
    /** Another live connection already holds the rank. */
    RANK_TAKEN(3),
    /** The request is not valid (rank out of range, barrier sizes that disagree, a counter that is not a number). */
    BAD_REQUEST(4),
    /** The server is closing. */
    SHUTTING_DOWN(5),
    /**
     * A write would take the store past its total size ({@link RendezvousOptions#maxStoreBytes()}) or the
     * connection past its number of keys ({@link RendezvousOptions#maxKeysPerClient()}); nothing was stored and
     * the connection stays open.
     */
    LIMIT_EXCEEDED(6);

    final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    static @Nullable ErrorCode of(int code) {
        for (ErrorCode c : values()) if (c.code == code) return c;
        return null;
    }
}
