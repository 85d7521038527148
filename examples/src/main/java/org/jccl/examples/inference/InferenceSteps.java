package org.jccl.examples.inference;

import io.micrometer.observation.Observation;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Step;
import org.jccl.core.Work;
import org.jccl.core.spi.Feature;
import org.jccl.device.KernelLaunch;
import org.jccl.examples.serving.OrderedSteps;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.SymmetricPool;
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
 * On GPUs the matrix products are CUDA kernels ({@link MlpKernels}) issued with the collectives, back to back in call
 * order on the communicator's stream, and the step waits once, for all of them; on the host backend they are plain
 * Java between the collectives (reads and writes are copies on the step thread).
 */
final class InferenceSteps extends OrderedSteps<List<InferRequest>> {
    private final MlpModel model;
    private final int size;
    private final Buffer inputs;
    private final Buffer partial;
    private final Buffer block;
    private final Buffer head;
    private final Buffer gathered;
    private final @Nullable MlpKernels kernels;
    private final @Nullable BatchGraphs graphs;
    private final @Nullable SymmetricPool pool;
    private List<InferRequest> live = List.of();

    /** {@code graphs}: on GPUs, replay each batch size's step as a captured graph (else issue it eagerly each time). */
    InferenceSteps(Backend backend, ReactiveCommunicator comm, Scheduler steps, MlpModel model, int maxBatch, boolean graphs) {
        super(backend, comm, steps);
        this.model = model;
        this.size = comm.size();
        int device = comm.communicator().device();
        long activations = 4L * maxBatch * MlpModel.IN;
        long[] sizes = {activations, activations, activations, 4L * maxBatch * model.outPart(), 4L * maxBatch * MlpModel.OUT};
        // On GPUs (NCCL 2.27+) the step's buffers lie in one symmetric window, where NCCL runs its symmetric kernels;
        // every rank makes the same allocations in the same order, so their offsets agree.
        boolean windows = backend.kind() != BackendKind.HOST && backend.features().has(Feature.COMM_WINDOW_REGISTER);
        this.pool = windows ? SymmetricPool.create(comm.communicator(), SymmetricPool.bytesFor(sizes)).join() : null;
        Buffer[] b = new Buffer[sizes.length];
        for (int i = 0; i < sizes.length; i++) b[i] = pool != null ? pool.allocate(sizes[i]) : backend.allocate(device, sizes[i]);
        this.inputs = b[0];
        this.partial = b[1];
        this.block = b[2];
        this.head = b[3];
        this.gathered = b[4];
        this.kernels = backend.kind() == BackendKind.HOST ? null : new MlpKernels(backend, comm.communicator(), model);
        this.graphs = kernels != null && graphs ? new BatchGraphs() : null;
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

    /** A batch serves several requests, but a step has one parent: the first request still waiting. */
    @Override
    protected @Nullable Observation observation(List<InferRequest> batch) {
        return batch.stream().filter(r -> !r.isAbandoned()).map(InferRequest::observation).filter(Objects::nonNull)
                .findFirst().orElse(null);
    }

    @Override
    protected Mono<Void> run(int[] parameters, @Nullable List<InferRequest> batch) {
        int n = parameters[0];
        Mono<Void> computed = kernels != null ? onDevice(kernels, n) : onHost(n);
        return computed.then(Mono.fromRunnable(() -> answer(n, batch)));
    }

    private Mono<Void> onHost(int n) {
        return comm.broadcast(inputs, inputs, (long) n * MlpModel.IN, DataType.FLOAT32, 0)
                .then(Mono.fromRunnable(() -> partial.write(0, model.partialBlock(inputs.readFloats(0, n * MlpModel.IN), n))))
                .then(comm.allReduce(partial, block, (long) n * MlpModel.IN, DataType.FLOAT32, ReduceOp.SUM))
                .then(Mono.fromRunnable(() -> head.write(0, model.headPart(block.readFloats(0, n * MlpModel.IN), n))))
                .then(comm.allGather(head, gathered, (long) n * model.outPart(), DataType.FLOAT32));
    }

    /**
     * The step on the device: replayed where this batch size is captured; else issued eagerly, and captured after its
     * first eager run.
     */
    private Mono<Void> onDevice(MlpKernels gpu, int n) {
        Step captured = graphs == null ? null : graphs.step(n);
        if (captured != null) return replay(captured);
        Mono<Void> eager = eager(gpu, n);
        if (graphs == null || !graphs.captureAfter(n)) return eager;
        return eager.then(graphs.capture(n, size -> recipe(gpu, size), scheduler()));
    }

    private Mono<Void> replay(Step step) {
        return Mono.defer(() -> {
            Work replayed;
            try {
                replayed = step.replay();
            } catch (RuntimeException refused) {
                comm.communicator().abort(); // the other ranks replay theirs: fail them now, not at their timeout
                return Mono.error(refused);
            }
            return Mono.fromFuture(replayed).then().publishOn(scheduler());
        });
    }

    /** Batch size {@code n}'s operations for a step: the eager path's, in its order. */
    private BatchGraphs.Recipe recipe(MlpKernels gpu, int n) {
        long activations = (long) n * MlpModel.IN;
        KernelLaunch blockKernel = gpu.prepareBlock(inputs, partial, n);
        KernelLaunch headKernel;
        try {
            headKernel = gpu.prepareHead(block, head, n);
        } catch (RuntimeException e) {
            blockKernel.close();
            throw e;
        }
        Step.Builder b = Step.builder(comm.communicator())
                .add(Operation.broadcast(inputs, inputs, activations, DataType.FLOAT32, 0))
                .add(blockKernel.operation())
                .add(Operation.allReduce(partial, block, activations, DataType.FLOAT32, ReduceOp.SUM))
                .add(headKernel.operation())
                .add(Operation.allGather(head, gathered, (long) n * model.outPart(), DataType.FLOAT32));
        return new BatchGraphs.Recipe(b, List.of(blockKernel, headKernel));
    }

    /** Everything issued at once, in this order on the stream; the step resumes on its own thread when all are done. */
    private Mono<Void> eager(MlpKernels gpu, int n) {
        return Mono.defer(() -> {
            Communicator c = comm.communicator();
            long activations = (long) n * MlpModel.IN;
            CompletableFuture<Void> all;
            try {
                all = CompletableFuture.allOf(
                        c.broadcast(inputs, inputs, activations, DataType.FLOAT32, 0),
                        gpu.block(inputs, partial, n),
                        c.allReduce(partial, block, activations, DataType.FLOAT32, ReduceOp.SUM),
                        gpu.head(block, head, n),
                        c.allGather(head, gathered, (long) n * model.outPart(), DataType.FLOAT32));
            } catch (RuntimeException refused) {
                // Part of the step is issued and the rest cannot be: the ranks' collectives no longer match. Abort,
                // so that every rank fails now instead of waiting out the timeout.
                c.abort();
                return Mono.error(refused);
            }
            return Mono.fromFuture(all).publishOn(scheduler());
        });
    }

    /** Rank 0 answers every request of the batch from the gathered head outputs. */
    private void answer(int n, @Nullable List<InferRequest> batch) {
        if (batch == null) return;
        int part = model.outPart();
        float[] g = gathered.readFloats(0, size * n * part);
        for (int s = 0; s < n; s++) {
            float[] out = new float[MlpModel.OUT];
            for (int r = 0; r < size; r++) System.arraycopy(g, (r * n + s) * part, out, r * part, part);
            live.get(s).succeed(out);
        }
    }

    @Override
    public void close() {
        super.close();
        if (graphs != null) graphs.close();
        inputs.close();
        partial.close();
        block.close();
        head.close();
        gathered.close();
        if (pool != null) pool.close(); // collective: every rank closes its steps at the end
        if (kernels != null) kernels.close();
    }
}
