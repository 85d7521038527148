package org.jccl.examples.inference;

import java.util.List;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.examples.serving.OrderedSteps;
import org.jccl.reactive.ReactiveCommunicator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A batch as one ordered step ({@link OrderedSteps}), after the descriptor's broadcast (parameter: the batch size):
 *
 * <ol>
 *   <li>broadcast of the batch's inputs from rank 0;</li>
 *   <li>each rank's column- then row-parallel part of the block, summed by an all-reduce;</li>
 *   <li>each rank's columns of the head, joined by an all-gather; rank 0 answers every request of the batch.</li>
 * </ol>
 *
 * Compute is plain Java on every backend; on GPUs the activations travel in device buffers through the library's
 * collectives (reads and writes are copies on the step thread).
 */
final class InferenceSteps extends OrderedSteps<List<InferRequest>> {
    private final MlpModel model;
    private final int size;
    private final Buffer inputs;
    private final Buffer partial;
    private final Buffer block;
    private final Buffer head;
    private final Buffer gathered;
    private List<InferRequest> live = List.of();

    InferenceSteps(Backend backend, ReactiveCommunicator comm, Scheduler steps, MlpModel model, int maxBatch) {
        super(backend, comm, steps);
        this.model = model;
        this.size = comm.size();
        int device = comm.communicator().device();
        this.inputs = backend.allocate(device, 4L * maxBatch * MlpModel.IN);
        this.partial = backend.allocate(device, 4L * maxBatch * MlpModel.IN);
        this.block = backend.allocate(device, 4L * maxBatch * MlpModel.IN);
        this.head = backend.allocate(device, 4L * maxBatch * model.outPart());
        this.gathered = backend.allocate(device, 4L * maxBatch * MlpModel.OUT);
    }

    @Override
    protected int[] parameters(List<InferRequest> batch) {
        live = batch.stream().filter(r -> !r.isAbandoned()).toList();
        float[] x = new float[live.size() * MlpModel.IN];
        for (int s = 0; s < live.size(); s++) System.arraycopy(live.get(s).input, 0, x, s * MlpModel.IN, MlpModel.IN);
        inputs.write(0, x);
        return new int[] {live.size(), 0};
    }

    @Override
    protected boolean skip(List<InferRequest> batch) {
        return batch.stream().allMatch(InferRequest::isAbandoned);
    }

    @Override
    protected void fail(List<InferRequest> batch, Throwable error) {
        for (InferRequest r : batch) r.fail(error);
    }

    @Override
    protected Mono<Void> run(int[] parameters, @Nullable List<InferRequest> batch) {
        int n = parameters[0];
        int part = model.outPart();
        return comm.broadcast(inputs, inputs, (long) n * MlpModel.IN, DataType.FLOAT32, 0)
                .then(Mono.fromRunnable(() -> partial.write(0, model.partialBlock(inputs.readFloats(0, n * MlpModel.IN), n))))
                .then(comm.allReduce(partial, block, (long) n * MlpModel.IN, DataType.FLOAT32, ReduceOp.SUM))
                .then(Mono.fromRunnable(() -> head.write(0, model.headPart(block.readFloats(0, n * MlpModel.IN), n))))
                .then(comm.allGather(head, gathered, (long) n * part, DataType.FLOAT32))
                .then(Mono.fromRunnable(() -> {
                    if (batch == null) return;
                    float[] g = gathered.readFloats(0, size * n * part);
                    for (int s = 0; s < n; s++) {
                        float[] out = new float[MlpModel.OUT];
                        for (int r = 0; r < size; r++) System.arraycopy(g, (r * n + s) * part, out, r * part, part);
                        live.get(s).succeed(out);
                    }
                }));
    }

    @Override
    public void close() {
        super.close();
        inputs.close();
        partial.close();
        block.close();
        head.close();
        gathered.close();
    }
}
