package org.jccl.core.bench;

import java.util.Set;
import org.jccl.core.NoLibraryDriver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.LaunchOp;

/**
 * A driver that does nothing and whose events are complete as soon as they are recorded: what remains of an
 * operation is jccl's own CPU path (validation, admission, the launch-queue hand-off, the event thread's completion),
 * which {@link IssuePathBenchmark} measures. It keeps no history, so it costs the same at the millionth operation.
 */
final class InstantDriver extends NoLibraryDriver {
    InstantDriver() {
        super("instant", 1L << 30);
    }

    @Override
    protected DriverComm comm(int rank, int size) {
        return new Comm(rank, size);
    }

    @Override
    public String describe() {
        return "instant driver (benchmark: no library, events complete when recorded)";
    }

    @Override
    public int version() {
        return 0;
    }

    @Override
    public Features features() {
        return new Features("instant", "0", Set.of());
    }

    @Override
    public int deviceCount() {
        return 0;
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        return new DriverEvent() {
            @Override
            public int device() {
                return DriverConstants.HOST_DEVICE;
            }

            @Override
            public long handle() {
                return 1;
            }

            @Override
            public void record(DriverStream stream) {
            }

            @Override
            public int query() {
                return DriverConstants.EVENT_DONE;
            }

            @Override
            public void synchronize() {
            }

            @Override
            public float elapsedMillisSince(DriverEvent start) {
                return 0;
            }

            @Override
            public void destroy() {
            }
        };
    }

    @Override
    public void pollEvents(DriverEvent[] events, int n, int[] status) {
        for (int i = 0; i < n; i++) status[i] = DriverConstants.EVENT_DONE;
    }

    @Override
    public float groupSimulateEnd() {
        return 0;
    }

    @Override
    public void launch(DriverComm comm, LaunchOp operation, DriverStream stream) {
    }
}
