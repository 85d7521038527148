package org.jccl.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Communicator;
import org.jccl.core.Operation;
import org.jccl.reactive.ReactiveCommunicator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The reactive path: one cold {@code Mono} per rank, built once; each issue is a fresh subscription, which issues
 * exactly one operation. Pipelines go through {@link ReactiveCommunicator#pipeline}, bounded in flight.
 */
final class ReactiveIssuer implements Issuer {
    private final List<ReactiveCommunicator> comms = new ArrayList<>();
    private final List<List<Operation>> ops;
    private final List<Mono<Void>> monos = new ArrayList<>();

    ReactiveIssuer(List<Communicator> comms, List<List<Operation>> ops) {
        this.ops = ops;
        for (int r = 0; r < comms.size(); r++) {
            ReactiveCommunicator rc = ReactiveCommunicator.of(comms.get(r));
            this.comms.add(rc);
            List<Operation> mine = ops.get(r);
            monos.add(mine.size() == 1 ? rc.submit(mine.get(0)) : rc.submitGroup(mine));
        }
    }

    @Override
    public CompletableFuture<?> issue(int rank) {
        return monos.get(rank).toFuture();
    }

    /** {@code count} operations on {@code rank} with at most {@code inFlight} in flight; completes after the last. */
    CompletableFuture<?> pipeline(int rank, int count, int inFlight) {
        List<Operation> mine = ops.get(rank);
        if (mine.size() != 1) throw new IllegalArgumentException("pipelines take one operation per item; sendrecv is a group");
        Operation op = mine.get(0);
        return comms.get(rank).pipeline(Flux.range(0, count), i -> op, inFlight).then().toFuture();
    }

    @Override
    public String path() {
        return "reactive";
    }
}
