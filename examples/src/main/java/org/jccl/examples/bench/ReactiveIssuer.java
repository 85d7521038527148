package org.jccl.examples.bench;

import java.util.List;
import org.jccl.core.Communicator;
import org.jccl.core.Operation;

/** The reactive path: each issue subscribes to a fresh {@code Mono} of the reactive API. */
final class ReactiveIssuer {
    private ReactiveIssuer() {
    }

    static Issuer create(List<Communicator> comms, List<List<Operation>> ops) {
        throw new IllegalArgumentException("--path reactive needs the reactive module, which is not merged yet");
    }
}
