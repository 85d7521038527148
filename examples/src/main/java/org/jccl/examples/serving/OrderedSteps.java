package org.jccl.examples.serving;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.util.Arrays;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.reactive.ReactiveCommunicator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The one ordered issue path of a service: every step is the same collectives on every rank, in the same order. Rank 0
 * runs one step per unit of work of its stream with {@code concatMap}, then a stop step; the others run steps until
 * the stop. Each step opens with a broadcast from rank 0 of its descriptor (go or stop, the step's parameters, its
 * sequence number), so only rank 0 decides what comes next and tells the others before anything else of the step: no
 * interleaving of concurrent requests can make ranks issue in different orders. Every signal and buffer access runs on
 * one single-threaded {@code steps} scheduler — never on jccl's event thread (a buffer read from a GPU is a blocking
 * copy) nor on an HTTP thread. Rank 0's step runs with its work's observation ({@link #observation}) in its Reactor
 * context, so the step's operations are observed as that request's children.
 *
 * @param <W> rank 0's unit of work per step (a request, a batch)
 */
public abstract class OrderedSteps<W> implements AutoCloseable {
    /** Parameters a step's descriptor carries, after go/stop and before the sequence number. */
    protected static final int PARAMETERS = 2;
    private static final int GO = 1;
    private static final int STOP = 2;
    private static final int DESCRIPTOR_INTS = PARAMETERS + 2;

    /** The communicator, signalling on {@link #scheduler()}. */
    protected final ReactiveCommunicator comm;
    private final Scheduler steps;
    private final Buffer descriptor;
    private int sequence;
    private long completed;
    private long orderHash = 17;

    protected OrderedSteps(Backend backend, ReactiveCommunicator comm, Scheduler steps) {
        this.comm = comm.publishOn(steps);
        this.steps = steps;
        this.descriptor = backend.allocate(comm.communicator().device(), 4L * DESCRIPTOR_INTS);
    }

    /**
     * Rank 0: one step per unit of work not to be skipped, in stream order, then the stop step. Work is requested one
     * unit at a time, when the previous step completed, so a batching upstream batches what waited meanwhile.
     */
    public Mono<Void> lead(Flux<W> work) {
        return work.publishOn(steps, 1)
                .concatMap(w -> skip(w) ? Mono.empty() : traced(step(w), observation(w)).doOnError(e -> fail(w, e)), 1)
                .then(Mono.defer(() -> step(null)))
                .then();
    }

    /** Ranks other than 0: steps until rank 0 stops. */
    public Mono<Void> follow() {
        return Mono.defer(() -> step(null)).subscribeOn(steps).repeat().takeWhile(more -> more).then();
    }

    /** Steps completed (this rank). */
    public long completed() {
        return completed;
    }

    /** A hash of the sequence numbers of every step, in the order this rank ran them: equal on all ranks. */
    public long orderHash() {
        return orderHash;
    }

    /** The single thread every step runs on. */
    protected Scheduler scheduler() {
        return steps;
    }

    /** Rank 0, before the step's descriptor goes out: the step's {@link #PARAMETERS} parameters for every rank. */
    protected abstract int[] parameters(W work);

    /** The step's collectives and compute on this rank; {@code work} is rank 0's (null on the others). */
    protected abstract Mono<Void> run(int[] parameters, @Nullable W work);

    /** Whether rank 0 skips {@code work} (its clients went away); decided before its descriptor goes out. */
    protected abstract boolean skip(W work);

    /** {@code work}'s step failed. */
    protected abstract void fail(W work, Throwable error);

    /** The observation {@code work}'s step reports to (its operations become its children), or null. */
    protected abstract @Nullable Observation observation(W work);

    private static <T> Mono<T> traced(Mono<T> step, @Nullable Observation parent) {
        return parent == null ? step : step.contextWrite(ctx -> ctx.put(ObservationThreadLocalAccessor.KEY, parent));
    }

    /** One step; {@code work} is rank 0's (null on the others, and for rank 0's stop step). Emits "continue". */
    private Mono<Boolean> step(@Nullable W work) {
        if (comm.rank() == 0) {
            int[] d = new int[DESCRIPTOR_INTS];
            d[0] = work == null ? STOP : GO;
            if (work != null) System.arraycopy(parameters(work), 0, d, 1, PARAMETERS);
            d[DESCRIPTOR_INTS - 1] = work == null ? -1 : sequence++;
            descriptor.write(0, d);
        }
        return comm.broadcast(descriptor, descriptor, DESCRIPTOR_INTS, DataType.INT32, 0).then(Mono.defer(() -> {
            int[] d = descriptor.readInts(0, DESCRIPTOR_INTS);
            if (d[0] == STOP) return Mono.just(false);
            int[] parameters = Arrays.copyOfRange(d, 1, 1 + PARAMETERS);
            return run(parameters, work).then(Mono.fromCallable(() -> {
                completed++;
                orderHash = orderHash * 31 + d[DESCRIPTOR_INTS - 1];
                return true;
            }));
        }));
    }

    /** Frees the descriptor; subclasses free their own buffers too. */
    @Override
    public void close() {
        descriptor.close();
    }
}
