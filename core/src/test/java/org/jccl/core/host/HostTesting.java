package org.jccl.core.host;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;

/** Small helpers for host-backend tests: float buffers in and out, the cause of a failed future, ranks joining. */
final class HostTesting {
    private HostTesting() {
    }

    static Backend host() {
        return Jccl.backend(BackendKind.HOST);
    }

    static Buffer floats(float... values) {
        Buffer b = host().allocate(0, 4L * values.length);
        ByteBuffer bytes = ByteBuffer.allocate(4 * values.length).order(ByteOrder.nativeOrder());
        for (float v : values) bytes.putFloat(v);
        bytes.flip();
        b.write(0, bytes);
        return b;
    }

    static float[] read(Buffer b) {
        ByteBuffer bytes = ByteBuffer.allocate((int) b.byteSize()).order(ByteOrder.nativeOrder());
        b.read(0, bytes);
        bytes.flip();
        float[] out = new float[(int) (b.byteSize() / 4)];
        for (int i = 0; i < out.length; i++) out[i] = bytes.getFloat();
        return out;
    }

    /** Waits (bounded) for {@code f} to fail and returns why. */
    static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS)).getCause();
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    /** Ranks 0..n-1 of {@code id}, each joining as if from its own process (over TCP when the id is a network id). */
    static List<Communicator> join(UniqueId id, int n) throws Exception {
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < n; r++) joining.add(host().initRank(id, n, r, -1));
        List<Communicator> comms = new ArrayList<>();
        for (CompletableFuture<Communicator> f : joining) comms.add(await(f));
        return comms;
    }
}
