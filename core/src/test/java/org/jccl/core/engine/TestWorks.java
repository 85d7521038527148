package org.jccl.core.engine;

import org.jccl.core.spi.DriverEvent;
import org.jspecify.annotations.Nullable;

/** Test access to what the engine knows of a work. */
public final class TestWorks {
    private TestWorks() {
    }

    /** The completion event recorded after the work, or null while it has not launched. */
    public static @Nullable DriverEvent event(TrackedWork work) {
        return work.event();
    }
}
