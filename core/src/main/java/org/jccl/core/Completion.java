package org.jccl.core;

import org.jspecify.annotations.Nullable;

/**
 * How a caller that wants no future per operation learns that one completed ({@link Step#replay(Completion)}): told
 * once per issue, on jccl's event thread (so never block in it, as in a {@link Work}'s dependent stages), or at once on
 * the issuing thread when the issue was refused. One object may serve every issue of a loop: nothing is allocated to
 * tell it.
 */
@FunctionalInterface
public interface Completion {
    /**
     * @param failure null on success, else what the operation's {@link Work} would have failed with (a timeout, an
     *                abort, a closed communicator)
     */
    void completed(@Nullable Throwable failure);
}
