package org.jccl.reactive.kotlin

import java.time.Duration
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.asFlux
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.yield
import org.jccl.core.Buffer
import org.jccl.core.CommConfig
import org.jccl.core.CommMemoryStats
import org.jccl.core.CommOptions
import org.jccl.core.Communicator
import org.jccl.core.DataType
import org.jccl.core.Operation
import org.jccl.core.PreMulSum
import org.jccl.core.ReduceOp
import org.jccl.core.Registration
import org.jccl.core.UniqueId
import org.jccl.core.Work
import org.jccl.core.error.InvalidArgumentException
import org.jccl.reactive.ReactiveCommunicator
import reactor.core.scheduler.Scheduler

/**
 * The coroutine shape of a [Communicator]: every operation, with the same name and parameters, as a `suspend`
 * function that issues the operation when called and resumes when it completes. Obtained with
 * [Communicator.coroutines] or [ReactiveCommunicator.coroutines]; it wraps the reactive shape.
 *
 * Every rank must call the same collectives in the same order: call them sequentially from one coroutine per rank
 * (or use [pipeline] / [Flow.through]), never from several concurrent coroutines of one rank.
 *
 * Cancelling the calling coroutine only detaches: an issued operation still runs to completion and keeps its
 * buffers alive, and the communicator stays usable. Failures are core's typed exceptions
 * ([org.jccl.core.error.JcclException] and its subclasses).
 */
class CoroutineCommunicator(
    /** The reactive shape this wraps. */
    val reactive: ReactiveCommunicator,
) {
    /** The core communicator. */
    val communicator: Communicator get() = reactive.communicator()

    /** This rank's index. */
    val rank: Int get() = reactive.rank()

    /** The number of ranks. */
    val size: Int get() = reactive.size()

    /** A copy that resumes continuations from signals emitted on [scheduler] instead of the event thread. */
    fun publishOn(scheduler: Scheduler): CoroutineCommunicator = CoroutineCommunicator(reactive.publishOn(scheduler))

    /** A copy whose operations each use [timeout] (zero: none) instead of the communicator's. */
    fun timeout(timeout: Duration): CoroutineCommunicator = CoroutineCommunicator(reactive.timeout(timeout))

    /** [Communicator.allReduce], suspending until it completes. */
    suspend fun allReduce(send: Buffer, recv: Buffer, count: Long, type: DataType, op: ReduceOp) {
        reactive.allReduce(send, recv, count, type, op).awaitSingleOrNull()
    }

    /** [Communicator.broadcast], suspending until it completes. */
    suspend fun broadcast(send: Buffer, recv: Buffer, count: Long, type: DataType, root: Int) {
        reactive.broadcast(send, recv, count, type, root).awaitSingleOrNull()
    }

    /** [Communicator.reduce], suspending until it completes. */
    suspend fun reduce(send: Buffer, recv: Buffer, count: Long, type: DataType, op: ReduceOp, root: Int) {
        reactive.reduce(send, recv, count, type, op, root).awaitSingleOrNull()
    }

    /** [Communicator.allGather], suspending until it completes. */
    suspend fun allGather(send: Buffer, recv: Buffer, sendCount: Long, type: DataType) {
        reactive.allGather(send, recv, sendCount, type).awaitSingleOrNull()
    }

    /** [Communicator.reduceScatter], suspending until it completes. */
    suspend fun reduceScatter(send: Buffer, recv: Buffer, recvCount: Long, type: DataType, op: ReduceOp) {
        reactive.reduceScatter(send, recv, recvCount, type, op).awaitSingleOrNull()
    }

    /** [Communicator.gather], suspending until it completes. */
    suspend fun gather(send: Buffer, recv: Buffer, sendCount: Long, type: DataType, root: Int) {
        reactive.gather(send, recv, sendCount, type, root).awaitSingleOrNull()
    }

    /** [Communicator.scatter], suspending until it completes. */
    suspend fun scatter(send: Buffer, recv: Buffer, recvCount: Long, type: DataType, root: Int) {
        reactive.scatter(send, recv, recvCount, type, root).awaitSingleOrNull()
    }

    /** [Communicator.allToAll], suspending until it completes. */
    suspend fun allToAll(send: Buffer, recv: Buffer, count: Long, type: DataType) {
        reactive.allToAll(send, recv, count, type).awaitSingleOrNull()
    }

    /** [Communicator.allToAllv], suspending until it completes. */
    suspend fun allToAllv(
        send: Buffer, sendCounts: LongArray, sendDisplacements: LongArray,
        recv: Buffer, recvCounts: LongArray, recvDisplacements: LongArray, type: DataType,
    ) {
        reactive.allToAllv(send, sendCounts, sendDisplacements, recv, recvCounts, recvDisplacements, type).awaitSingleOrNull()
    }

    /** [Communicator.allReduceWithBias], suspending until it completes. */
    suspend fun allReduceWithBias(send: Buffer, recv: Buffer, count: Long, type: DataType, op: ReduceOp, bias: Buffer) {
        reactive.allReduceWithBias(send, recv, count, type, op, bias).awaitSingleOrNull()
    }

    /** [Communicator.send], suspending until it completes; the peer must call the matching [recv]. */
    suspend fun send(send: Buffer, count: Long, type: DataType, peer: Int) {
        reactive.send(send, count, type, peer).awaitSingleOrNull()
    }

    /** [Communicator.recv], suspending until it completes. */
    suspend fun recv(recv: Buffer, count: Long, type: DataType, peer: Int) {
        reactive.recv(recv, count, type, peer).awaitSingleOrNull()
    }

    /** [Communicator.barrier], suspending until every rank has called it. */
    suspend fun barrier() {
        reactive.barrier().awaitSingleOrNull()
    }

    /** [Communicator.barrier] with its own [timeout] (zero: none). */
    suspend fun barrier(timeout: Duration) {
        reactive.barrier(timeout).awaitSingleOrNull()
    }

    /** [Communicator.submit], suspending until the operation completes. */
    suspend fun submit(operation: Operation) {
        reactive.submit(operation).awaitSingleOrNull()
    }

    /** [Communicator.submit] with the operation's own [timeout] (zero: none). */
    suspend fun submit(operation: Operation, timeout: Duration) {
        reactive.submit(operation, timeout).awaitSingleOrNull()
    }

    /** [Communicator.submitGroup]: several operations as one group call, suspending until all complete. */
    suspend fun submitGroup(operations: List<Operation>) {
        reactive.submitGroup(operations).awaitSingleOrNull()
    }

    /** Issues [operation] and returns its [Work] at once, without waiting for it to complete. */
    suspend fun issue(operation: Operation): Work = reactive.issue(operation).awaitSingle()

    /**
     * Runs [items] through this communicator as a [Flow]: each item's operation is launched in item order, at most
     * [maxInFlight] are in flight, and each item is emitted, in order, once its operation has completed. This is
     * [ReactiveCommunicator.pipeline] (the one implementation) behind a Flow.
     *
     * The launch of item `i + maxInFlight` waits until item `i` was emitted and its collector returned, so buffers
     * can be reused in a ring of [maxInFlight] slots. The flow is cold; [items] and [toOperation] run on the
     * collecting coroutine's dispatcher, in item order. Cancelling the collector detaches the operations already
     * launched.
     */
    fun <T : Any> pipeline(items: Flow<T>, maxInFlight: Int, toOperation: (T) -> Operation): Flow<T> {
        if (maxInFlight < 1) throw InvalidArgumentException("maxInFlight must be at least 1, not $maxInFlight")
        return flow {
            // One permit per buffer slot, returned when the collector is done with an item. The Flux alone would
            // count an item as taken once handed to asFlow's buffer, before the collector has seen it.
            val slots = Semaphore(maxInFlight)
            // The source runs on this collector's dispatcher, so user code never runs on jccl's event thread.
            val launchContext = currentCoroutineContext()[ContinuationInterceptor] ?: EmptyCoroutineContext
            val gated = items.onEach { slots.acquire() }.asFlux(launchContext)
            // The permits alone bound what is in flight. The Flux may run one more, so that its demand, which
            // Reactor replenishes from the event thread whenever that thread gets to it, never holds back the
            // launch a release allows: the source already waits in acquire() for that permit.
            val fluxInFlight = if (maxInFlight == Int.MAX_VALUE) maxInFlight else maxInFlight + 1
            reactive.pipeline(gated, { item -> toOperation(item) }, fluxInFlight).asFlow().collect { item ->
                emit(item)
                // Resumes the source waiting for this permit, on the source's dispatcher ...
                slots.release()
                // ... where it launches before the next item is taken, so that maxInFlight stay in flight even when
                // this collector and the launches share one thread.
                yield()
            }
        }
    }

    /** [Communicator.split]: the communicator of the ranks that gave the same [color]. */
    suspend fun split(color: Int, key: Int): CoroutineCommunicator =
        CoroutineCommunicator(reactive.split(color, key).awaitSingle())

    /** [Communicator.split] with a configuration and options. */
    suspend fun split(color: Int, key: Int, config: CommConfig, options: CommOptions): CoroutineCommunicator =
        CoroutineCommunicator(reactive.split(color, key, config, options).awaitSingle())

    /** [Communicator.splitExcluded]: takes part in a split without joining a new communicator. */
    suspend fun splitExcluded() {
        reactive.splitExcluded().awaitSingleOrNull()
    }

    /** [Communicator.shrink]: the communicator of the ranks not in [excludedRanks]. */
    suspend fun shrink(excludedRanks: IntArray, config: CommConfig, options: CommOptions): CoroutineCommunicator =
        CoroutineCommunicator(reactive.shrink(excludedRanks, config, options).awaitSingle())

    /**
     * [Communicator.suspend]: releases the communicator's dynamic GPU memory, in issue order after the work already
     * issued. Throws [org.jccl.core.error.UnsupportedFeatureException] where the library lacks it.
     */
    suspend fun suspend() {
        reactive.suspend().awaitSingleOrNull()
    }

    /** [Communicator.resume]: restores what [suspend] released. */
    suspend fun resume() {
        reactive.resume().awaitSingleOrNull()
    }

    /** [Communicator.memStats]: the GPU memory the library tracks for this communicator. */
    suspend fun memStats(): CommMemoryStats = reactive.memStats().awaitSingle()

    /** [Communicator.revoke]: stops the in-flight operations so that the communicator can be shrunk or destroyed. */
    suspend fun revoke() {
        reactive.revoke().awaitSingleOrNull()
    }

    /** [Communicator.growUniqueId]: the id new ranks use to join through [grow]. */
    suspend fun growUniqueId(): UniqueId = reactive.growUniqueId().awaitSingle()

    /** [Communicator.grow], on every current rank: the rank that made [id] passes it, the others pass null. */
    suspend fun grow(newSize: Int, id: UniqueId?, config: CommConfig, options: CommOptions): CoroutineCommunicator =
        CoroutineCommunicator(reactive.grow(newSize, id, config, options).awaitSingle())

    /** [Communicator.createPreMulSum] with a host scalar. */
    suspend fun createPreMulSum(scalar: Double, type: DataType): PreMulSum =
        reactive.createPreMulSum(scalar, type).awaitSingle()

    /** [Communicator.createPreMulSum] with a scalar in device memory. */
    suspend fun createPreMulSum(scalar: Buffer, type: DataType): PreMulSum =
        reactive.createPreMulSum(scalar, type).awaitSingle()

    /** [Communicator.register]: close the registration to deregister. */
    suspend fun register(buffer: Buffer): Registration = reactive.register(buffer).awaitSingle()

    /** [Communicator.closeAsync]: drains pending work, then destroys; suspends, never blocks a thread. */
    suspend fun closeAsync() {
        reactive.closeAsync().awaitSingleOrNull()
    }

    /** [Communicator.abort]: fails pending work and frees the communicator; never hangs. */
    suspend fun abort() {
        reactive.abort().awaitSingleOrNull()
    }

    override fun toString(): String = "Coroutine" + communicator.describe()
}

/** The coroutine shape of this communicator (signals on the event thread). */
fun Communicator.coroutines(): CoroutineCommunicator = CoroutineCommunicator(ReactiveCommunicator.of(this))

/** The coroutine shape of this reactive communicator, with its scheduler and timeout. */
fun ReactiveCommunicator.coroutines(): CoroutineCommunicator = CoroutineCommunicator(this)

/**
 * Runs this flow's items through [communicator]: see [CoroutineCommunicator.pipeline].
 *
 * ```
 * chunks.asFlow().through(comm, maxInFlight = 8) { i -> Operation.allReduce(buf[i % 8], buf[i % 8], n, FLOAT32, SUM) }
 * ```
 */
fun <T : Any> Flow<T>.through(communicator: CoroutineCommunicator, maxInFlight: Int, toOperation: (T) -> Operation): Flow<T> =
    communicator.pipeline(this, maxInFlight, toOperation)
