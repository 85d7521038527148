package org.jccl.rma.reactive;

import org.jccl.core.error.Errors;
import org.jccl.rma.kv.KvDelivered;
import org.jccl.rma.kv.KvLayer;
import org.jccl.rma.kv.KvOptions;
import org.jccl.rma.kv.KvPool;
import org.jccl.rma.kv.KvRequest;
import org.jccl.rma.kv.KvSend;
import org.jccl.rma.kv.KvSender;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The reactive shape of {@link KvSender}: a request's layers come in as a {@link Publisher} (each element a layer the
 * model has computed), the delivery goes out as a {@link Mono}. Cold: nothing is sent until the Mono is subscribed;
 * cancelling it cancels the request ({@link org.jccl.rma.kv.KvFailure#CANCELLED_BY_SENDER}) and the layers'
 * subscription, and the request's source blocks may be reused once its {@link KvSend#done()} has failed.
 */
public final class ReactiveKvSender {
    private final KvSender core;

    private ReactiveKvSender(KvSender core) {
        this.core = core;
    }

    /** {@link KvSender#open}: a sender on {@code pool}. */
    public static ReactiveKvSender open(KvPool pool, KvOptions options) {
        return new ReactiveKvSender(KvSender.open(pool, options));
    }

    /** The core shape. */
    public KvSender core() {
        return core;
    }

    /**
     * At subscription: sends {@code request}, marking each layer ready as {@code layers} emits it; completes with the
     * delivery once every layer is usable on the receiver, or fails with the {@link org.jccl.rma.kv.KvTransferException}.
     * A layer publisher that fails or completes before every layer came cancels the request.
     */
    public Mono<KvDelivered> send(KvRequest request, Publisher<KvLayer> layers) {
        Errors.requireArgument(request, "request");
        Errors.requireArgument(layers, "layers");
        return Mono.defer(() -> {
            KvSend send = core.send(request);
            int expected = core.pool().layout().layers();
            int[] seen = {0};
            Disposable feeding = Flux.from(layers).subscribe(layer -> {
                send.ready(layer);
                seen[0]++;
            }, error -> send.cancel(), () -> {
                if (seen[0] < expected) send.cancel(); // the model stopped early: nothing more will come
            });
            return Mono.fromFuture(send.done()).doOnCancel(() -> {
                feeding.dispose();
                send.cancel();
            });
        });
    }

    /** {@link KvSender#closeAsync()} at subscription. */
    public Mono<Void> closeAsync() {
        return Mono.defer(() -> Mono.fromFuture(core.closeAsync()));
    }

    @Override
    public String toString() {
        return "Reactive" + core;
    }
}
