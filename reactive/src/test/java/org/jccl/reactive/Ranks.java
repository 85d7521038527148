package org.jccl.reactive;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.spi.DriverConstants;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * The ranks of one test: reactive communicators made by {@code initAll} on one backend, the buffers the test
 * allocates, and tidy-up that closes all of them (aborting a communicator whose work can never complete).
 */
final class Ranks implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(30);

    final Backend backend;
    final List<ReactiveCommunicator> comms;
    private final List<Buffer> buffers = new ArrayList<>();
    private final List<ReactiveCommunicator> extra = new ArrayList<>();

    private Ranks(Backend backend, List<ReactiveCommunicator> comms) {
        this.backend = backend;
        this.comms = comms;
    }

    static Ranks open(Backend backend, int n, CommOptions options) {
        int[] devices = new int[n];
        for (int i = 0; i < n; i++) devices[i] = backend.kind() == BackendKind.HOST ? DriverConstants.HOST_DEVICE : i;
        List<ReactiveCommunicator> comms = ReactiveBackend.of(backend).initAll(devices, options).block(WAIT);
        if (comms == null) throw new IllegalStateException("initAll emitted nothing");
        return new Ranks(backend, comms);
    }

    int size() {
        return comms.size();
    }

    ReactiveCommunicator comm(int rank) {
        return comms.get(rank);
    }

    Communicator core(int rank) {
        return comms.get(rank).communicator();
    }

    /** Closes {@code c} with the others at the end (communicators a test makes by split or shrink). */
    ReactiveCommunicator track(ReactiveCommunicator c) {
        extra.add(c);
        return c;
    }

    /** One Mono per rank, subscribed together (they are different communicators, so their order is free). */
    Mono<Void> all(IntFunction<? extends Publisher<?>> perRank) {
        List<Publisher<?>> monos = new ArrayList<>();
        for (int r = 0; r < size(); r++) monos.add(perRank.apply(r));
        return Mono.when(monos);
    }

    /** A float32 buffer on {@code rank}'s device holding {@code values}. */
    Buffer floats(int rank, float... values) {
        Buffer b = backend.allocate(core(rank).device(), Math.max(4L, values.length * 4L));
        buffers.add(b);
        write(b, values);
        return b;
    }

    /** A zeroed float32 buffer of {@code n} elements on {@code rank}'s device. */
    Buffer zeros(int rank, int n) {
        return floats(rank, new float[n]);
    }

    static void write(Buffer b, float... values) {
        ByteBuffer bytes = ByteBuffer.allocate(values.length * 4).order(ByteOrder.nativeOrder());
        for (float v : values) bytes.putFloat(v);
        bytes.flip();
        b.write(0, bytes);
    }

    static float[] read(Buffer b, int n) {
        ByteBuffer bytes = ByteBuffer.allocate(n * 4).order(ByteOrder.nativeOrder());
        b.read(0, bytes);
        bytes.flip();
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = bytes.getFloat();
        return out;
    }

    static float[] filled(int n, float value) {
        float[] a = new float[n];
        java.util.Arrays.fill(a, value);
        return a;
    }

    static DataType f32() {
        return DataType.FLOAT32;
    }

    @Override
    public void close() {
        List<ReactiveCommunicator> all = new ArrayList<>(extra);
        all.addAll(comms);
        // Start every close before waiting on any: finalizing one rank may wait for its peers.
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (ReactiveCommunicator c : all) {
            Communicator core = c.communicator();
            // Work that can never complete (a test left a rank waiting) would make close() wait for its drain.
            closing.add(core.pendingCount() > 0 && core.isOpen() ? core.abort() : core.closeAsync());
        }
        for (CompletableFuture<Void> f : closing) f.orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).exceptionally(e -> null).join();
        for (Buffer b : buffers) b.close();
    }
}
