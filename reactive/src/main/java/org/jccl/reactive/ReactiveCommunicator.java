package org.jccl.reactive;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jccl.core.Buffer;
import org.jccl.core.CommConfig;
import org.jccl.core.CommMemoryStats;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.PreMulSum;
import org.jccl.core.ReduceOp;
import org.jccl.core.Registration;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The reactive shape of a {@link Communicator}: the same operations, with the same names and parameters, as cold
 * {@link Mono}s.
 *
 * <p><b>Cold, one operation per subscription.</b> Nothing is enqueued when a method returns; each subscription
 * issues exactly one operation, at subscription time, on the subscribing thread. Bad arguments fail that
 * subscription with core's {@link InvalidArgumentException} (or {@code InvalidUsageException}) and enqueue nothing.
 * The Mono completes when the operation's stream event completes.
 *
 * <p><b>Same order on every rank.</b> Operations launch in subscription order; every rank must subscribe to the
 * same collectives in the same order. Chain them ({@code concatMap}, {@code then}) or use {@link #pipeline}; never
 * subscribe collectives from several threads at once unless every rank does so in one agreed order. A mismatch
 * hangs until the timeout ({@link CommOptions}, {@link #timeout(Duration)}), which fails the Mono with a
 * {@code WorkTimeoutException} naming the pending work (sequence, operation, count, type).
 *
 * <p><b>Threads.</b> Signals are emitted on jccl's event thread (or on the subscribing thread if the operation had
 * already completed). Never block there: the thread is Reactor's {@code NonBlocking}, so {@code block()} fails at
 * once. Use {@link #publishOn(Scheduler)} to receive signals on a scheduler of your own.
 *
 * <p><b>Cancellation detaches.</b> Cancelling a subscriber does not stop an issued operation: it runs to
 * completion and its buffers stay alive until then. Later operations keep working.
 *
 * <p>Instances are immutable; {@link #publishOn} and {@link #timeout} return configured copies over the same
 * communicator.
 */
public final class ReactiveCommunicator implements AutoCloseable {
    private final Communicator communicator;
    private final @Nullable Scheduler scheduler;
    private final @Nullable Duration timeout;

    private ReactiveCommunicator(Communicator communicator, @Nullable Scheduler scheduler, @Nullable Duration timeout) {
        this.communicator = communicator;
        this.scheduler = scheduler;
        this.timeout = timeout;
    }

    /** The reactive shape of {@code communicator}; signals on the event thread, the communicator's own timeout. */
    public static ReactiveCommunicator of(Communicator communicator) {
        return new ReactiveCommunicator(Errors.requireArgument(communicator, "communicator"), null, null);
    }

    static ReactiveCommunicator of(Communicator communicator, @Nullable Scheduler scheduler) {
        return new ReactiveCommunicator(communicator, scheduler, null);
    }

    /** A copy that emits every signal on {@code scheduler} instead of the event thread. */
    public ReactiveCommunicator publishOn(Scheduler scheduler) {
        return new ReactiveCommunicator(communicator, Errors.requireArgument(scheduler, "scheduler"), timeout);
    }

    /**
     * A copy whose operations each use {@code timeout} (zero: none) in place of the communicator's
     * {@link CommOptions#timeout()}, as {@link #submit(Operation, Duration)} does. The communicator's
     * {@link CommOptions#timeoutPolicy()} still decides what a timeout does. Group calls keep the communicator's
     * timeout.
     */
    public ReactiveCommunicator timeout(Duration timeout) {
        Errors.requireArgument(timeout, "timeout");
        if (timeout.isNegative()) throw new InvalidArgumentException("timeout must not be negative: " + timeout);
        return new ReactiveCommunicator(communicator, scheduler, timeout);
    }

    /** The core communicator this wraps (the same object for every copy). */
    public Communicator communicator() {
        return communicator;
    }

    /** This rank's index in the communicator. */
    public int rank() {
        return communicator.rank();
    }

    /** The number of ranks. */
    public int size() {
        return communicator.size();
    }

    /** The scheduler signals are emitted on, or null for the event thread. */
    @Nullable Scheduler scheduler() {
        return scheduler;
    }

    /** The timeout set by {@link #timeout(Duration)}, or null for the communicator's. */
    @Nullable Duration ownTimeout() {
        return timeout;
    }

    @Override
    public String toString() {
        return "Reactive" + communicator.describe();
    }

    // ---- operations: one core call per subscription

    /** {@link Communicator#allReduce}, issued at subscription. */
    public Mono<Void> allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op) {
        return submitted(() -> Operation.allReduce(send, recv, count, type, op));
    }

    /** {@link Communicator#broadcast}, issued at subscription. */
    public Mono<Void> broadcast(Buffer send, Buffer recv, long count, DataType type, int root) {
        return submitted(() -> Operation.broadcast(send, recv, count, type, root));
    }

    /** {@link Communicator#reduce}, issued at subscription. */
    public Mono<Void> reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root) {
        return submitted(() -> Operation.reduce(send, recv, count, type, op, root));
    }

    /** {@link Communicator#allGather}, issued at subscription. */
    public Mono<Void> allGather(Buffer send, Buffer recv, long sendCount, DataType type) {
        return submitted(() -> Operation.allGather(send, recv, sendCount, type));
    }

    /** {@link Communicator#reduceScatter}, issued at subscription. */
    public Mono<Void> reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op) {
        return submitted(() -> Operation.reduceScatter(send, recv, recvCount, type, op));
    }

    /** {@link Communicator#gather}, issued at subscription. */
    public Mono<Void> gather(Buffer send, Buffer recv, long sendCount, DataType type, int root) {
        return submitted(() -> Operation.gather(send, recv, sendCount, type, root));
    }

    /** {@link Communicator#scatter}, issued at subscription. */
    public Mono<Void> scatter(Buffer send, Buffer recv, long recvCount, DataType type, int root) {
        return submitted(() -> Operation.scatter(send, recv, recvCount, type, root));
    }

    /** {@link Communicator#allToAll}, issued at subscription. */
    public Mono<Void> allToAll(Buffer send, Buffer recv, long count, DataType type) {
        return submitted(() -> Operation.allToAll(send, recv, count, type));
    }

    /** {@link Communicator#allToAllv}, issued at subscription (the arrays are read then). */
    public Mono<Void> allToAllv(Buffer send, long[] sendCounts, long[] sendDisplacements, Buffer recv,
                                long[] recvCounts, long[] recvDisplacements, DataType type) {
        return submitted(() -> Operation.allToAllv(send, sendCounts, sendDisplacements, recv, recvCounts,
                recvDisplacements, type));
    }

    /** {@link Communicator#allReduceWithBias}, issued at subscription. */
    public Mono<Void> allReduceWithBias(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Buffer bias) {
        return submitted(() -> Operation.allReduceWithBias(send, recv, count, type, op, bias));
    }

    /** {@link Communicator#send}, issued at subscription; the peer must issue the matching {@link #recv}. */
    public Mono<Void> send(Buffer send, long count, DataType type, int peer) {
        return submitted(() -> Operation.send(send, count, type, peer));
    }

    /** {@link Communicator#recv}, issued at subscription. */
    public Mono<Void> recv(Buffer recv, long count, DataType type, int peer) {
        return submitted(() -> Operation.recv(recv, count, type, peer));
    }

    /**
     * {@link Communicator#barrier()}, issued at subscription (with this view's timeout, if set): completes once every
     * rank has subscribed to its barrier.
     */
    public Mono<Void> barrier() {
        Duration t = timeout;
        return FutureMono.of(() -> t == null ? communicator.barrier() : communicator.barrier(t), scheduler);
    }

    /** {@link Communicator#barrier(Duration)}: a barrier with its own timeout (zero: none). */
    public Mono<Void> barrier(Duration timeout) {
        return FutureMono.of(() -> communicator.barrier(Errors.requireArgument(timeout, "timeout")), scheduler);
    }

    /** {@link Communicator#submit(Operation)}, issued at subscription (with this view's timeout, if set). */
    public Mono<Void> submit(Operation operation) {
        return submitted(() -> Errors.requireArgument(operation, "operation"));
    }

    /** {@link Communicator#submit(Operation, Duration)}: one operation with its own timeout (zero: none). */
    public Mono<Void> submit(Operation operation, Duration timeout) {
        return FutureMono.of(() -> communicator.submit(Errors.requireArgument(operation, "operation"),
                Errors.requireArgument(timeout, "timeout")), scheduler);
    }

    /**
     * {@link Communicator#submitGroup}: several operations of this communicator between one group start and end,
     * issued at subscription; completes when all have. For groups over several communicators see
     * {@link ReactiveGroup}.
     */
    public Mono<Void> submitGroup(List<Operation> operations) {
        return FutureMono.of(() -> communicator.submitGroup(Errors.requireArgument(operations, "operations")),
                scheduler);
    }

    /**
     * Issues {@code operation} at subscription and emits its {@link Work} at once, before it completes: for callers
     * who want the sequence number or description, or to await completion themselves. Cancelling detaches.
     */
    public Mono<Work> issue(Operation operation) {
        Errors.requireArgument(operation, "operation");
        return FutureMono.publishOn(Mono.fromSupplier(() -> timeout == null ? communicator.submit(operation)
                : communicator.submit(operation, timeout)), scheduler);
    }

    /**
     * Runs {@code items} through this communicator: each item's operation ({@code toOperation}) is launched in
     * item order, at most {@code maxInFlight} are in flight at once, and each item is emitted, in order, once its
     * operation has completed. Backpressure reaches {@code items}: more are requested only as operations complete
     * and the consumer takes their items. The first failure ends the Flux with that error; operations already
     * launched still run to completion.
     *
     * <p>Buffers: the operation of item {@code i + maxInFlight} may be launched as soon as item {@code i} has been
     * emitted, so a ring of {@code maxInFlight} buffers is safe when the subscriber uses item {@code i}'s buffer
     * synchronously in {@code onNext}; a subscriber on another thread ({@link #publishOn}) needs more slots.
     *
     * <p>Every rank must run the same sequence of operations, so feed every rank's pipeline the same items in the
     * same order (or items that map to the same collectives).
     *
     * @param items       the work items, e.g. requests or chunk indices
     * @param toOperation the operation for one item; called on the thread that delivers the item, in item order
     * @param maxInFlight how many operations may be in flight at once (at least 1)
     * @param <T>         the item type
     */
    public <T> Flux<T> pipeline(Publisher<T> items, Function<? super T, Operation> toOperation, int maxInFlight) {
        return Flux.defer(() -> Pipeline.of(communicator, timeout, scheduler, items, toOperation, maxInFlight));
    }

    // ---- communicator-level operations

    /**
     * {@link Communicator#split(int, int, CommConfig, CommOptions)} at subscription; emits the new communicator
     * (with this copy's scheduler). If the subscriber cancels first, the new communicator is closed when ready.
     */
    public Mono<ReactiveCommunicator> split(int color, int key, CommConfig config, CommOptions options) {
        return created(() -> communicator.split(color, key, config, options));
    }

    /** {@link #split(int, int, CommConfig, CommOptions)} with the default configuration and this one's options. */
    public Mono<ReactiveCommunicator> split(int color, int key) {
        return split(color, key, CommConfig.DEFAULT, communicator.options());
    }

    /** {@link Communicator#splitExcluded()} at subscription: takes part in a split without joining. */
    public Mono<Void> splitExcluded() {
        return FutureMono.of(communicator::splitExcluded, scheduler);
    }

    /** {@link Communicator#shrink} at subscription; emits the communicator of the remaining ranks. */
    public Mono<ReactiveCommunicator> shrink(int[] excludedRanks, CommConfig config, CommOptions options) {
        return created(() -> communicator.shrink(excludedRanks, config, options));
    }

    /**
     * {@link Communicator#suspend()} at subscription: releases the communicator's dynamic GPU memory, in issue
     * order after the work already issued. Fails with {@code UnsupportedFeatureException} where the library lacks it.
     */
    public Mono<Void> suspend() {
        return FutureMono.of(communicator::suspend, scheduler);
    }

    /** {@link Communicator#resume()} at subscription: restores what {@link #suspend()} released. */
    public Mono<Void> resume() {
        return FutureMono.of(communicator::resume, scheduler);
    }

    /** {@link Communicator#memStats()} at subscription: the GPU memory the library tracks for this communicator. */
    public Mono<CommMemoryStats> memStats() {
        return FutureMono.of(communicator::memStats, scheduler);
    }

    /**
     * {@link Communicator#revoke()} at subscription: stops the in-flight operations so that the communicator can be
     * shrunk or destroyed. It runs on its own thread, not behind the operations it stops.
     */
    public Mono<Void> revoke() {
        return FutureMono.of(communicator::revoke, scheduler);
    }

    /** {@link Communicator#growUniqueId()} at subscription: the id new ranks use to join through {@link #grow}. */
    public Mono<UniqueId> growUniqueId() {
        return FutureMono.of(communicator::growUniqueId, scheduler);
    }

    /**
     * {@link Communicator#grow} at subscription, on every current rank; emits the communicator of {@code newSize}
     * ranks. The rank that made the id passes it, the others pass null.
     */
    public Mono<ReactiveCommunicator> grow(int newSize, @Nullable UniqueId id, CommConfig config, CommOptions options) {
        return created(() -> communicator.grow(newSize, id, config, options));
    }

    /** {@link Communicator#createPreMulSum(double, DataType)} at subscription. */
    public Mono<PreMulSum> createPreMulSum(double scalar, DataType type) {
        return FutureMono.of(() -> communicator.createPreMulSum(scalar, type), PreMulSum::close, scheduler);
    }

    /** {@link Communicator#createPreMulSum(Buffer, DataType)} at subscription. */
    public Mono<PreMulSum> createPreMulSum(Buffer scalar, DataType type) {
        return FutureMono.of(() -> communicator.createPreMulSum(scalar, type), PreMulSum::close, scheduler);
    }

    /** {@link Communicator#register} at subscription; close the registration to deregister. */
    public Mono<Registration> register(Buffer buffer) {
        return FutureMono.of(() -> communicator.register(buffer), Registration::close, scheduler);
    }

    /** {@link Communicator#closeAsync()} at subscription: drains pending work, then destroys. Idempotent. */
    public Mono<Void> closeAsync() {
        return FutureMono.of(communicator::closeAsync, scheduler);
    }

    /** {@link Communicator#abort()} at subscription: fails pending work and frees the communicator; never hangs. */
    public Mono<Void> abort() {
        return FutureMono.of(communicator::abort, scheduler);
    }

    /** {@link Communicator#close()}: blocks until drained and destroyed. Never call it on the event thread. */
    @Override
    public void close() {
        communicator.close();
    }

    // ---- internals

    /**
     * A communicator that {@code start} makes from this one, wrapped with this copy's scheduler (not its timeout,
     * which was chosen for this communicator's operations). One nobody receives is closed once ready.
     */
    private Mono<ReactiveCommunicator> created(Supplier<CompletableFuture<Communicator>> start) {
        return FutureMono.of(start, ReactiveCommunicator::closeUnclaimed, scheduler).map(this::child);
    }

    private ReactiveCommunicator child(Communicator c) {
        return new ReactiveCommunicator(c, scheduler, null);
    }

    /** Closes a communicator that was created for a subscriber who cancelled, without blocking the thread. */
    static void closeUnclaimed(Communicator communicator) {
        communicator.closeAsync();
    }

    /** One operation per subscription: the operation is built and issued when subscribed. */
    private Mono<Void> submitted(Supplier<Operation> operation) {
        Duration t = timeout;
        return FutureMono.of(() -> t == null ? communicator.submit(operation.get())
                : communicator.submit(operation.get(), t), scheduler);
    }
}
