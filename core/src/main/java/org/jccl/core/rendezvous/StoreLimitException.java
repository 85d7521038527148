package org.jccl.core.rendezvous;

/**
 * A write would take the store past one of its limits (total bytes, keys per connection). Thrown before anything
 * is changed; the server answers ERROR {@link ErrorCode#LIMIT_EXCEEDED} and keeps the connection.
 */
final class StoreLimitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StoreLimitException(String message) {
        super(message);
    }
}
