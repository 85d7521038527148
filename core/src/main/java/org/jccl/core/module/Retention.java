package org.jccl.core.module;

import java.util.ArrayList;
import java.util.List;

/**
 * What a captured step must keep alive for one of its operations beyond the buffers (a window it puts into, a device
 * communicator its kernel reaches peers through): taken when the step is built, closed once the step is closed and
 * its last replay completed. A work needs none: a window's or device communicator's close already waits for the work
 * issued before it.
 */
@FunctionalInterface
public interface Retention {
    /** Nothing to keep. */
    Retention NONE = () -> () -> { };

    /**
     * Takes the hold; the returned handle releases it once (later closes do nothing).
     *
     * @throws org.jccl.core.error.InvalidUsageException if what it keeps is already closed
     */
    AutoCloseable retain();

    /** Every one of {@code retentions}, taken in order; if one is refused, those taken before are released. */
    static Retention all(List<Retention> retentions) {
        List<Retention> copy = List.copyOf(retentions);
        if (copy.isEmpty()) return NONE;
        if (copy.size() == 1) return copy.get(0);
        return () -> {
            List<AutoCloseable> taken = new ArrayList<>(copy.size());
            try {
                for (Retention r : copy) taken.add(r.retain());
            } catch (RuntimeException e) {
                releaseAll(taken);
                throw e;
            }
            return () -> releaseAll(taken);
        };
    }

    /** Releases a hold that {@link #retain} returned. */
    static void release(AutoCloseable hold) {
        try {
            hold.close();
        } catch (Exception e) {
            throw new IllegalStateException("releasing a hold failed", e);
        }
    }

    private static void releaseAll(List<AutoCloseable> taken) {
        for (int i = taken.size() - 1; i >= 0; i--) release(taken.get(i));
    }
}
