package org.jccl.rma.kv;

import org.jccl.core.Buffer;
import org.jccl.core.Stream;
import org.jccl.core.Work;

/**
 * A path on which the sender writes straight into the receiver's pool, with nothing to do on the receiver's side but
 * to be told when a layer landed: a device kernel over NVLink ({@link KvPathKind#LSA_KERNEL}, from {@code device-api})
 * or copies between ranks of one process ({@link KvPathKind#COPY}). Everything it enqueues goes on the KV
 * communicator's stream, in issue order with the work that produced the layers.
 */
public interface KvDirectPath {
    KvPathKind kind();

    /** What it is, for the reports, e.g. {@code LSA kernel, 132 blocks of 512 threads}. */
    String describe();

    /** Whether this rank can write into {@code peer}'s pool. */
    boolean reaches(int peer);

    /** Ends the path (collective where opening was: every rank closes it), after the copies issued before. */
    java.util.concurrent.CompletableFuture<Void> closeAsync();

    /**
     * Whether {@link Prepared#copyLayer} also raises the layer's device signal in the peer's window
     * ({@link KvPlan#signalOffset()}), which the peer's {@link #awaitSignal} waits for on the device.
     */
    default boolean signalsLayers() {
        return false;
    }

    /**
     * Enqueues on {@code stream} (an application's stream of this rank's device), at once, a wait on the device until
     * the 64-bit word at {@code signalOffset} of this rank's window reaches {@code value}, or the word of {@code cancel}
     * (pinned host memory that the receiver sets when it ends the request) does. The work completes when it passed.
     */
    default Work awaitSignal(Stream stream, long signalOffset, Buffer cancel, long value) {
        throw new UnsupportedOperationException(kind() + " raises no device signals");
    }

    /** Prepares one request's copies (e.g. uploads its segment table, ordered on the stream before its layers). */
    Prepared prepare(KvPlan plan);

    /** One request, ready to copy its layers. */
    interface Prepared extends AutoCloseable {
        /** Enqueues every tensor of {@code layer}; the work completes when they landed in the peer's pool. */
        Work copyLayer(int layer);

        /** Frees what {@link #prepare} made, once the copies issued before have completed. */
        @Override
        void close();
    }
}
