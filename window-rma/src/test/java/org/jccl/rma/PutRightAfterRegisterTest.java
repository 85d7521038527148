package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Test;

/**
 * A window is a peer's target as soon as any rank's registration completed: the first rank back from the collective
 * registration may put to a rank whose thread has not yet returned from it. Each rank here puts to the next from the
 * thread that completes its registration, the earliest moment there is, on many windows in turn.
 */
class PutRightAfterRegisterTest {
    private static final int RANKS = 4;
    private static final int WINDOWS = 150;

    @Test
    void aPutIssuedTheMomentARegistrationCompletesFindsThePeersWindow() throws Exception {
        List<Communicator> comms = Jccl.backend(BackendKind.HOST).initAll(RANKS).get(30, TimeUnit.SECONDS);
        try {
            for (int round = 0; round < WINDOWS; round++) {
                List<CompletableFuture<Window>> putting = new ArrayList<>();
                for (Communicator c : comms) {
                    OneSided rma = OneSided.of(c);
                    int next = (c.rank() + 1) % RANKS;
                    int value = round * RANKS + c.rank();
                    putting.add(rma.register(rma.allocate(64), WindowFlag.COLL_SYMMETRIC).thenCompose(w -> {
                        w.buffer().write(0, new int[] {value});
                        return rma.putSignal(w, w.buffer().slice(0, 4), 1, DataType.INT32, next, 32).thenApply(v -> w);
                    }));
                }
                List<Window> windows = new ArrayList<>();
                for (CompletableFuture<Window> p : putting) windows.add(p.get(30, TimeUnit.SECONDS));
                for (Communicator c : comms) {
                    int previous = (c.rank() + RANKS - 1) % RANKS;
                    OneSided.of(c).waitSignal(SignalWait.of(previous, 1)).get(30, TimeUnit.SECONDS);
                    assertArrayEquals(new int[] {round * RANKS + previous}, windows.get(c.rank()).buffer().readInts(32, 1),
                            "window " + round + " of rank " + c.rank());
                }
                OneSided.closeAll(windows).get(30, TimeUnit.SECONDS);
            }
        } finally {
            comms.forEach(Communicator::close);
        }
    }
}
