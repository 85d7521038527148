package org.jccl.rma.kv;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.Event;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * One request being sent: tell it which layers are ready as the model computes them ({@link #ready}); each goes as soon
 * as it is ready and the receiver granted destination blocks. {@link #done()} completes once every layer is usable on
 * the receiver, or fails with a {@link KvTransferException} (deadline, cancel, refusal, a failed copy, the peer's
 * loss) once nothing of the request is in flight any more on either side: from then on its source blocks may be reused.
 */
public final class KvSend {
    private final KvSender sender;
    private final KvRequest request;
    private final long id;
    private final int layers;
    private final boolean[] announced;
    final CompletableFuture<KvDelivered> done = new CompletableFuture<>();

    KvSend(KvSender sender, KvRequest request, long id, int layers) {
        this.sender = sender;
        this.request = request;
        this.id = id;
        this.layers = layers;
        this.announced = new boolean[layers];
    }

    public KvRequest request() {
        return request;
    }

    long id() {
        return id;
    }

    /** Layer {@code layer} was written by work already issued on the pool communicator's stream. */
    public KvSend ready(int layer) {
        return ready(new KvLayer(layer, null));
    }

    /** Layer {@code layer} is written once the work before {@code produced} has completed. */
    public KvSend ready(int layer, Event produced) {
        return ready(new KvLayer(layer, Errors.requireArgument(produced, "produced")));
    }

    /**
     * Announces a ready layer.
     *
     * @throws InvalidArgumentException for a layer outside the layout, or one announced before
     */
    public KvSend ready(KvLayer layer) {
        Errors.requireArgument(layer, "layer");
        int l = layer.layer();
        synchronized (announced) {
            if (l >= layers) {
                throw new InvalidArgumentException("KV request " + request.name() + ": no layer " + l + " (the layout has "
                        + layers + ")");
            }
            if (announced[l]) throw new InvalidArgumentException("KV request " + request.name() + ": layer " + l + " is ready twice");
            announced[l] = true;
        }
        sender.layerReady(this, layer);
        return this;
    }

    /** Every layer at once, each written by work already issued on the communicator's stream. */
    public KvSend allReady() {
        for (int l = 0; l < layers; l++) ready(l);
        return this;
    }

    /** Completes with the delivery report, or fails typed; completing the returned future changes nothing here. */
    public CompletableFuture<KvDelivered> done() {
        return done.copy();
    }

    /** Ends the request ({@link KvFailure#CANCELLED_BY_SENDER}); {@link #done()} fails once nothing is in flight. */
    public void cancel() {
        sender.cancel(this);
    }

    @Override
    public String toString() {
        return "KvSend[" + request.name() + (done.isDone() ? (done.isCompletedExceptionally() ? ", failed" : ", done") : "") + "]";
    }
}
