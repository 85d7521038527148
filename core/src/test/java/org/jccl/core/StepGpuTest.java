package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps captured into CUDA graphs on the GPUs of this machine (one process, up to two): replays give what eager
 * operations give, many times over, interleaved with eager operations on the same stream; a step over several
 * communicators is one graph forked and joined across their streams.
 */
@Tag("gpu")
class StepGpuTest {
    @Test
    void aCapturedStepReplaysItsCollectivesInOrder() throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        int n = Math.min(2, nccl.deviceCount());
        List<Communicator> comms = nccl.initAll(n).get(120, TimeUnit.SECONDS);
        List<Buffer> data = new ArrayList<>();
        List<PreMulSum> doubling = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        try {
            List<CompletableFuture<Step>> building = new ArrayList<>();
            for (Communicator c : comms) {
                Buffer b = nccl.allocate(c.device(), 8);
                b.write(0, new float[] {1, 3});
                data.add(b);
                // Sum over n ranks, times 2/n: every replay doubles, whatever n.
                PreMulSum p = c.createPreMulSum(2.0 / n, DataType.FLOAT32).get(30, TimeUnit.SECONDS);
                doubling.add(p);
            }
            // Once eagerly first, as a serving loop warms up before capturing: NCCL connects to peers on a collective's
            // first run, which cannot be captured.
            List<CompletableFuture<?>> warmUp = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Buffer b = data.get(r);
                warmUp.add(comms.get(r).allReduce(b, b, 2, DataType.FLOAT32, doubling.get(r)));
            }
            CompletableFuture.allOf(warmUp.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            for (int r = 0; r < n; r++) {
                Buffer b = data.get(r);
                building.add(Step.builder(comms.get(r))
                        .add(Operation.allReduce(b, b, 2, DataType.FLOAT32, doubling.get(r)))
                        .add(Operation.broadcast(b, b, 2, DataType.FLOAT32, 0))
                        .build());
            }
            for (CompletableFuture<Step> f : building) steps.add(f.get(60, TimeUnit.SECONDS));
            assertTrue(steps.get(0).isCaptured());
            for (int i = 1; i <= 20; i++) {
                List<CompletableFuture<?>> works = new ArrayList<>();
                for (Step s : steps) works.add(s.replay());
                if (i % 5 == 0) { // eager work between replays keeps its place in the stream's order
                    for (int r = 0; r < n; r++) {
                        works.add(comms.get(r).allReduce(data.get(r), data.get(r), 2, DataType.FLOAT32, doubling.get(r)));
                    }
                }
                CompletableFuture.allOf(works.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            }
            float factor = (float) Math.pow(2, 1 + 20 + 4); // the warm-up, the replays, the eager ones between
            for (Buffer b : data) assertArrayEquals(new float[] {factor, 3 * factor}, b.readFloats(0, 2));
        } finally {
            for (Step s : steps) s.close();
            for (PreMulSum p : doubling) p.close();
            for (Buffer b : data) b.close();
            comms.forEach(Communicator::close);
        }
    }

    @Test
    void aStepOverSeveralCommunicatorsIsOneGraph() throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        int n = Math.min(2, nccl.deviceCount());
        List<Communicator> comms = nccl.initAll(n).get(120, TimeUnit.SECONDS);
        // A second communicator on GPU 0, of a clique of its own: another stream on the same device.
        Communicator solo = nccl.initAll(new int[] {0}, CommOptions.defaults()).get(120, TimeUnit.SECONDS).get(0);
        List<AutoCloseable> opened = new ArrayList<>();
        try {
            List<Buffer> data = new ArrayList<>();
            List<Buffer> scratch = new ArrayList<>();
            Group sum = Group.create();
            Group fromZero = Group.create();
            Group warmUp = Group.create();
            for (int r = 0; r < n; r++) {
                Communicator c = comms.get(r);
                Buffer b = nccl.allocate(c.device(), 8);
                b.write(0, new float[] {1, 3});
                Buffer w = nccl.allocate(c.device(), 8);
                PreMulSum p = c.createPreMulSum(2.0 / n, DataType.FLOAT32).get(30, TimeUnit.SECONDS);
                opened.add(b);
                opened.add(w);
                opened.add(p);
                data.add(b);
                scratch.add(w);
                sum.add(c, Operation.allReduce(b, b, 2, DataType.FLOAT32, p));
                fromZero.add(c, Operation.broadcast(b, b, 2, DataType.FLOAT32, 0));
                warmUp.add(c, Operation.allReduce(w, w, 2, DataType.FLOAT32, p)); // NCCL connects on a first run
            }
            warmUp.submit().get(60, TimeUnit.SECONDS);
            PreMulSum soloDoubling = solo.createPreMulSum(2.0, DataType.FLOAT32).get(30, TimeUnit.SECONDS);
            opened.add(soloDoubling);
            // Per replay: every rank doubles (sum times 2/n), then rank 0's buffer doubles again on the other
            // communicator, then rank 0's value reaches every rank: times 4, if each stage waited for the one before.
            Step step = Step.builder(comms.get(0)).group(sum)
                    .add(solo, Operation.allReduce(data.get(0), data.get(0), 2, DataType.FLOAT32, soloDoubling))
                    .group(fromZero)
                    .build().get(60, TimeUnit.SECONDS);
            opened.add(step);
            assertTrue(step.isCaptured());
            assertTrue(step.communicators().contains(solo) && step.communicators().size() == n + 1, step.toString());
            for (int i = 0; i < 10; i++) step.replay().get(60, TimeUnit.SECONDS);
            float factor = (float) Math.pow(4, 10);
            for (Buffer b : data) assertArrayEquals(new float[] {factor, 3 * factor}, b.readFloats(0, 2));
        } finally {
            for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
            solo.close();
            comms.forEach(Communicator::close);
        }
    }
}
