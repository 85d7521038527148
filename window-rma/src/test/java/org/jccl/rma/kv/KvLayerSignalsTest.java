package org.jccl.rma.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.junit.jupiter.api.Test;

/**
 * A receiver's layer-signal book-keeping on the host backend, with a path that records what it was asked to wait
 * for (the kernels that wait run on GPUs only): rows, generations, cancel words and the bound on waits enqueued.
 */
class KvLayerSignalsTest {
    /** A path that "waits" with a marker on the stream and remembers each wait's word, cancel word and value. */
    static final class RecordingPath implements KvDirectPath {
        final List<long[]> waits = new ArrayList<>();

        @Override
        public KvPathKind kind() {
            return KvPathKind.LSA_KERNEL;
        }

        @Override
        public String describe() {
            return "recording";
        }

        @Override
        public boolean reaches(int peer) {
            return true;
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public Prepared prepare(KvPlan plan) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean signalsLayers() {
            return true;
        }

        @Override
        public Work awaitSignal(Stream stream, long signalOffset, Buffer cancel, long value) {
            waits.add(new long[] {signalOffset, cancel.address(), value});
            return stream.marker();
        }
    }

    @Test
    void rowsGenerationsCancelWordsAndTheBoundOnWaits() throws Exception {
        KvLayout layout = KvRig.small().layers(32).build();
        try (KvRig rig = new KvRig(List.of(layout), 0)) {
            KvPool pool = rig.pools.get(0);
            RecordingPath path = new RecordingPath();
            KvLayerSignals signals = new KvLayerSignals(pool, path);
            List<KvLayerSignals.Armed> armed = new ArrayList<>();
            while (signals.canArm()) armed.add(signals.take());
            assertEquals(KvLayerSignals.MAX_ARMED_LAYERS / 32, armed.size(), "4 requests of 32 layers fill the bound");

            KvLayerSignals.Armed first = armed.get(0);
            signals.enqueueWaits(3, first);
            assertEquals(32, path.waits.size());
            for (int l = 0; l < 32; l++) {
                assertArrayEquals(new long[] {pool.signalOffset(first.row()) + 8L * l, path.waits.get(0)[1], first.generation()},
                        path.waits.get(l), "layer " + l + "'s word, the row's cancel word, the generation");
            }
            assertNotEquals(pool.signalOffset(armed.get(1).row()), pool.signalOffset(first.row()));

            signals.cancel(first);
            // The cancel word the waits read (the one at the address the path was given) now holds the generation.
            Buffer words = signals.cancelWord(first);
            assertEquals(words.address(), path.waits.get(0)[1]);
            assertEquals(first.generation(), words.readLongs(0, 1)[0]);
            signals.release(first);
            assertTrue(signals.canArm(), "a request that ended gives its share of the bound back");
            KvLayerSignals.Armed again = signals.take();
            assertFalse(signals.canArm());
            while (again.row() != first.row()) { // rows go round: take until the first one comes back
                signals.release(again);
                again = signals.take();
            }
            assertTrue(again.generation() > first.generation(), "a reused row has a higher generation: no word is reset");

            for (int i = 1; i < armed.size(); i++) signals.release(armed.get(i));
            signals.release(again);
            signals.closeAsync().get(30, TimeUnit.SECONDS);
        }
    }
}
