package org.jccl.core.rendezvous;

/** A rendezvous operation's time ran out (keys never set, a barrier never filled, the server never answered). */
public final class RendezvousTimeoutException extends RendezvousException {
    private static final long serialVersionUID = 1L;

    /** @param message what was waited for, and how long */
    public RendezvousTimeoutException(String message) {
        super(message, ErrorCode.TIMEOUT);
    }
}
