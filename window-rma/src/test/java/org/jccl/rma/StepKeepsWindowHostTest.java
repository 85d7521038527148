package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Step;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A step that captured puts into a window keeps the window registered: closing the window on every rank refuses new
 * operations on it at once, lets the steps' replays go on, and deregisters once the steps are closed (two host ranks
 * of one JVM, each putting into the other's part and waiting for the other's put).
 */
class StepKeepsWindowHostTest {
    static final int N = 64;
    final Backend host = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms;
    List<Window> windows;

    @BeforeEach
    void open() throws Exception {
        comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        windows = OneSided.registerAll(comms, 2L * N * 4, WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        OneSided.closeAll(windows).get(30, TimeUnit.SECONDS);
        comms.forEach(Communicator::close);
    }

    @Test
    void windowsClosedUnderTheirStepsDeregisterOnceTheStepsAreClosed() throws Exception {
        List<Step> steps = new ArrayList<>();
        List<Buffer> sources = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            OneSided rma = OneSided.of(comms.get(r));
            Window w = windows.get(r);
            Buffer source = w.buffer().slice(4L * N, 4L * N); // the second half: the library reads a put's source through a window
            sources.add(source);
            int peer = 1 - r;
            steps.add(Step.builder(comms.get(r))
                    .add(rma.putSignalOperation(w, source, N, DataType.FLOAT32, peer, 0, 0, 0))
                    .add(rma.waitSignalOperation(SignalWait.of(peer, 1)))
                    .build().get(30, TimeUnit.SECONDS));
        }
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Window w : windows) closing.add(w.closeAsync());
        for (int r = 0; r < 2; r++) {
            Window w = windows.get(r);
            Buffer source = sources.get(r);
            assertTrue(w.isClosed());
            assertThrows(InvalidUsageException.class, () -> OneSided.of(w.communicator())
                    .putSignal(w, source, N, DataType.FLOAT32, 0, 0), "no new operation on a closed window");
        }
        for (int round = 1; round <= 3; round++) {
            for (int r = 0; r < 2; r++) sources.get(r).write(0, values(r, round));
            List<CompletableFuture<?>> replays = new ArrayList<>();
            for (Step s : steps) replays.add(s.replay());
            CompletableFuture.allOf(replays.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
            for (int r = 0; r < 2; r++) {
                assertArrayEquals(values(1 - r, round), windows.get(r).buffer().readFloats(0, N), "round " + round + ", rank " + r);
            }
            for (CompletableFuture<Void> c : closing) assertFalse(c.isDone(), "deregistered under a step");
        }
        for (Step s : steps) s.closeAsync();
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        for (int r = 0; r < 2; r++) assertFalse(OneSided.of(comms.get(r)).windows().contains(windows.get(r)));
    }

    private static float[] values(int rank, int round) {
        float[] v = new float[N];
        for (int i = 0; i < N; i++) v[i] = rank * 1000 + round * 100 + i;
        return v;
    }
}
