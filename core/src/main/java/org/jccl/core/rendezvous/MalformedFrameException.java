package org.jccl.core.rendezvous;

/** A frame that does not follow the protocol; the connection that sent it is closed. */
final class MalformedFrameException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MalformedFrameException(String message) {
        super(message);
    }
}
