package org.jccl.core.net;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.Objects;
import org.jccl.core.error.InvalidArgumentException;

/**
 * An application's event loop group lent to jccl: leases only hand it out; giving them back never shuts it down,
 * because jccl did not create it and the application may use it for its own channels.
 */
final class BorrowedLoops implements NetLoops {
    private final EventLoopGroup group;

    BorrowedLoops(EventLoopGroup group) {
        Objects.requireNonNull(group, "group");
        // jccl's bootstraps use NIO channels, which only NIO loops can register; say so now, not at the first bind.
        for (EventExecutor e : group) {
            if (!(e instanceof NioEventLoop)) {
                throw new InvalidArgumentException("jccl's channels are NIO channels: the group's loops must be NIO "
                        + "loops (a NioEventLoopGroup), not " + e.getClass().getName());
            }
        }
        this.group = group;
    }

    @Override
    public Lease lease() {
        if (group.isShuttingDown()) throw new IllegalStateException("the application's event loop group is shut down");
        return new Lease() {
            @Override
            public EventLoopGroup group() {
                return group;
            }

            @Override
            public Future<?> release() {
                return ImmediateEventExecutor.INSTANCE.newSucceededFuture(null);
            }
        };
    }

    @Override
    public String toString() {
        return "NetLoops.of(" + group.getClass().getSimpleName() + "@" + Integer.toHexString(System.identityHashCode(group)) + ")";
    }
}
