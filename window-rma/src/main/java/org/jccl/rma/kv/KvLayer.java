package org.jccl.rma.kv;

import org.jccl.core.Event;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * One layer of a request is ready to go: its blocks were written by work already issued on the pool communicator's
 * stream, or by work before {@code produced} (an event recorded on another stream, e.g. the model's).
 *
 * @param layer    the layer
 * @param produced an event after the work that wrote the layer, or null when that work is on the communicator's stream
 */
public record KvLayer(int layer, @Nullable Event produced) {
    public KvLayer {
        if (layer < 0) throw new InvalidArgumentException("a layer is not negative: " + layer);
    }

    /** Layer {@code layer}, written by work on the communicator's stream. */
    public static KvLayer of(int layer) {
        return new KvLayer(layer, null);
    }
}
