/**
 * jccl's reactive API: Reactor {@code Mono}/{@code Flux} over the core, which stays the one implementation.
 *
 * <ul>
 *   <li>{@link org.jccl.reactive.ReactiveBackend}: communicator creation ({@code initRank}, {@code initRankScalable},
 *       {@code initAll}) as Monos.</li>
 *   <li>{@link org.jccl.reactive.ReactiveCommunicator}: every operation and communicator-level call of
 *       {@link org.jccl.core.Communicator}, with the same names and parameters, as a cold {@code Mono}: operations
 *       as {@code Mono<Void>}, calls with a result as {@code Mono<T>} (split, shrink and grow emit reactive
 *       communicators).</li>
 *   <li>{@link org.jccl.reactive.ReactiveGroup}: a group call over one or several communicators, submitted or
 *       simulated.</li>
 *   <li>{@link org.jccl.reactive.ReactiveCommunicator#pipeline}: a Flux of items through a communicator with at
 *       most N operations in flight.</li>
 * </ul>
 *
 * <h2>The same-order rule</h2>
 * NCCL requires every rank to issue the same collectives in the same order; a mismatch hangs. Every Mono here is
 * cold and issues its operation when subscribed, so <em>subscription order is issue order</em>. Compose the
 * operations of one communicator sequentially, the same way on every rank:
 *
 * <pre>{@code
 * Flux.range(0, layers)
 *     .concatMap(i -> comm.allReduce(grads[i], grads[i], n, DataType.FLOAT32, ReduceOp.SUM))
 *     .then();
 * }</pre>
 *
 * or, to keep several operations in flight, {@code comm.pipeline(items, toOperation, maxInFlight)}, which launches
 * in item order. Do not use {@code flatMap}, {@code Mono.when}/{@code zip} of collectives or {@code subscribeOn}
 * to issue collectives of one communicator: they subscribe in an order that may differ between ranks. If the order
 * does differ, the pending operation fails after the timeout ({@link org.jccl.core.CommOptions#timeout()},
 * {@link org.jccl.reactive.ReactiveCommunicator#timeout(java.time.Duration)}) with a
 * {@link org.jccl.core.error.WorkTimeoutException} whose message names it, e.g.
 * {@code [comm=3f2a rank=1/2] allReduce(seq=17, count=1048576, float32, sum)}; with the default policy
 * ({@link org.jccl.core.TimeoutPolicy#ABORT_COMMUNICATOR}) the communicator is aborted and every pending and later
 * operation fails with {@link org.jccl.core.error.CommunicatorAbortedException}.
 *
 * <h2>Threads</h2>
 * Signals are emitted on jccl's one event thread unless a scheduler is configured
 * ({@code ReactiveCommunicator.publishOn(Scheduler)}, {@code ReactiveBackend.publishOn(Scheduler)}). The event
 * thread completes every operation of the process: never block on it. It is Reactor's
 * {@link reactor.core.scheduler.NonBlocking}, so {@code block()} there throws {@link IllegalStateException}.
 *
 * <h2>Cancellation, errors, lifetime</h2>
 * Cancelling a subscriber only detaches: the issued operation runs to completion on the GPU and keeps its buffers
 * alive. The first asynchronous error of a communicator aborts it and fails every pending Mono with the typed
 * exception ({@link org.jccl.core.error.JcclException} and its subclasses).
 */
@NullMarked
package org.jccl.reactive;

import org.jspecify.annotations.NullMarked;
