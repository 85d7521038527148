package org.jccl.core.observation;

import io.micrometer.observation.Observation;
import org.jccl.core.Communicator;
import org.jccl.core.Work;

/** What an observation of one operation knows: its {@link Work}, read when it was issued. */
public final class OperationContext extends Observation.Context {
    private final Work work;
    private final String communicator;
    private final int rank;
    private final int size;

    OperationContext(Work work) {
        this.work = work;
        Communicator c = work.communicator();
        this.communicator = c == null ? "" : c.id();
        this.rank = c == null ? -1 : c.rank();
        this.size = c == null ? 0 : c.size();
    }

    /** The work observed. */
    public Work work() {
        return work;
    }

    /** The communicator's id, shared by its ranks ({@code comm=3f2a} in messages). */
    public String communicator() {
        return communicator;
    }

    /** This rank. */
    public int rank() {
        return rank;
    }

    /** The communicator's number of ranks. */
    public int size() {
        return size;
    }
}
