package org.jccl.core.host;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Jccl;

/** Small helpers for host-backend tests: float buffers in and out, and the cause of a failed future. */
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
}
