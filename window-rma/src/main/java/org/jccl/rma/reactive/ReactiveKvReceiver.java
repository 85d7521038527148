package org.jccl.rma.reactive;

import org.jccl.core.error.Errors;
import org.jccl.rma.kv.KvBlockAllocator;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvReceived;
import org.jccl.rma.kv.KvReceiver;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The reactive shape of {@link KvReceiver}: the requests granted blocks come out as a {@link Flux}, each with its layers
 * as they become usable ({@link #layers}) and its end ({@link #done}). The Flux has one subscriber; what it has not
 * requested yet waits in a buffer bounded by the blocks decode can grant, and completes when the receiver closes.
 */
public final class ReactiveKvReceiver {
    private final KvReceiver core;
    private final Sinks.Many<KvIncoming> incoming;

    private ReactiveKvReceiver(KvReceiver core, Sinks.Many<KvIncoming> incoming) {
        this.core = core;
        this.incoming = incoming;
    }

    /** {@link KvReceiver#open} at subscription, the requests going to {@link #incoming()} instead of a callback. */
    public static Mono<ReactiveKvReceiver> open(KvPool pool, KvBlockAllocator allocator, KvOptions options) {
        Errors.requireArgument(pool, "pool");
        return Mono.defer(() -> {
            Sinks.Many<KvIncoming> sink = Sinks.many().unicast().onBackpressureBuffer();
            // Emitted from the receiver's one thread only, so tryEmitNext never meets a concurrent emission.
            return Mono.fromFuture(KvReceiver.open(pool, allocator, options, sink::tryEmitNext))
                    .map(core -> new ReactiveKvReceiver(core, sink));
        });
    }

    /** The core shape. */
    public KvReceiver core() {
        return core;
    }

    /** The requests granted blocks, in grant order; completes when the receiver closes. One subscriber. */
    public Flux<KvIncoming> incoming() {
        return incoming.asFlux();
    }

    /** The layers of {@code request} as they become usable (in that order), completing after the last. */
    public static Flux<Integer> layers(KvIncoming request) {
        Errors.requireArgument(request, "request");
        int count = request.layerCount();
        return Flux.range(0, count).flatMap(l -> Mono.fromFuture(request.layer(l)).thenReturn(l), count);
    }

    /** {@link KvIncoming#done()}. */
    public static Mono<KvReceived> done(KvIncoming request) {
        Errors.requireArgument(request, "request");
        return Mono.defer(() -> Mono.fromFuture(request.done()));
    }

    /** {@link KvReceiver#closeAsync()} at subscription; {@link #incoming()} then completes. */
    public Mono<Void> closeAsync() {
        return Mono.defer(() -> Mono.fromFuture(core.closeAsync())).doOnTerminate(incoming::tryEmitComplete);
    }

    @Override
    public String toString() {
        return "Reactive" + core;
    }
}
