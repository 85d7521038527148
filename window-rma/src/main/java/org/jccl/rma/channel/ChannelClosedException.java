package org.jccl.rma.channel;

import org.jccl.core.error.JcclException;
import org.jspecify.annotations.Nullable;

/** A block channel ended abnormally: the other side failed or cancelled, or the protocol was broken. */
public class ChannelClosedException extends JcclException {
    public ChannelClosedException(String message) {
        super(message);
    }

    public ChannelClosedException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
