package org.jccl.examples.bench;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Communicator;
import org.jccl.core.Operation;

/** The core path: {@code Communicator.submit} / {@code submitGroup}, completed as a {@code Work}. */
final class CoreIssuer implements Issuer {
    private final List<Communicator> comms;
    private final List<List<Operation>> ops;

    CoreIssuer(List<Communicator> comms, List<List<Operation>> ops) {
        this.comms = comms;
        this.ops = ops;
    }

    @Override
    public CompletableFuture<?> issue(int rank) {
        List<Operation> mine = ops.get(rank);
        return mine.size() == 1 ? comms.get(rank).submit(mine.get(0)) : comms.get(rank).submitGroup(mine);
    }

    @Override
    public String path() {
        return "core";
    }
}
