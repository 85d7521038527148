package org.jccl.rma.kotlin

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.asPublisher
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.rma.kv.KvBlockAllocator
import org.jccl.rma.kv.KvDelivered
import org.jccl.rma.kv.KvIncoming
import org.jccl.rma.kv.KvLayer
import org.jccl.rma.kv.KvOptions
import org.jccl.rma.kv.KvPool
import org.jccl.rma.kv.KvReceived
import org.jccl.rma.kv.KvReceiver
import org.jccl.rma.kv.KvRequest
import org.jccl.rma.kv.KvSender
import org.jccl.rma.reactive.ReactiveKvReceiver
import org.jccl.rma.reactive.ReactiveKvSender

/**
 * The coroutine shape of [KvSender]: a request's layers as a [Flow], the delivery as a suspend call. Cancelling the
 * caller cancels the request; its source blocks may be reused once the call has ended.
 */
class CoroutineKvSender(
    /** The reactive shape this wraps. */
    val reactive: ReactiveKvSender,
) {
    /** The core shape. */
    val core: KvSender get() = reactive.core()

    /** Sends [request], each layer as [layers] emits it; returns once every layer is usable on the receiver. */
    suspend fun send(request: KvRequest, layers: Flow<KvLayer>): KvDelivered =
        reactive.send(request, layers.asPublisher()).awaitSingle()

    /** [KvSender.closeAsync]. */
    suspend fun closeAsync() {
        reactive.closeAsync().awaitSingleOrNull()
    }

    companion object {
        /** [KvSender.open]. */
        @JvmStatic
        fun open(pool: KvPool, options: KvOptions): CoroutineKvSender = CoroutineKvSender(ReactiveKvSender.open(pool, options))
    }
}

/** The coroutine shape of [KvReceiver]: the requests granted blocks as a [Flow]. */
class CoroutineKvReceiver(
    /** The reactive shape this wraps. */
    val reactive: ReactiveKvReceiver,
) {
    /** The core shape. */
    val core: KvReceiver get() = reactive.core()

    /** The requests granted blocks, in grant order; ends when the receiver closes. Collect it once. */
    val incoming: Flow<KvIncoming> get() = reactive.incoming().asFlow()

    /** [KvReceiver.closeAsync]; [incoming] then ends. */
    suspend fun closeAsync() {
        reactive.closeAsync().awaitSingleOrNull()
    }

    companion object {
        /** [KvReceiver.open], the requests going to [incoming]. */
        @JvmStatic
        suspend fun open(pool: KvPool, allocator: KvBlockAllocator, options: KvOptions): CoroutineKvReceiver =
            CoroutineKvReceiver(ReactiveKvReceiver.open(pool, allocator, options).awaitSingle())

        /** Suspends until every layer of [request] is usable; throws its [org.jccl.rma.kv.KvTransferException] otherwise. */
        @JvmStatic
        suspend fun done(request: KvIncoming): KvReceived = ReactiveKvReceiver.done(request).awaitSingle()
    }
}

/** The layers of this request as they become usable. */
fun KvIncoming.usableLayers(): Flow<Int> = ReactiveKvReceiver.layers(this).asFlow()
