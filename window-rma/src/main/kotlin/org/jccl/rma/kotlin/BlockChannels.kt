package org.jccl.rma.kotlin

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.asPublisher
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.core.Buffer
import org.jccl.reactive.kotlin.CoroutineCommunicator
import org.jccl.rma.channel.BlockChannel
import org.jccl.rma.channel.ReceivedBlock

/** [BlockChannel.open]: collective, every rank of this communicator calls it; suspends until the window is registered. */
suspend fun CoroutineCommunicator.openBlockChannel(producer: Int, consumer: Int, slots: Int, blockBytes: Long): BlockChannel =
    BlockChannel.open(reactive, producer, consumer, slots, blockBytes).awaitSingle()

/**
 * [BlockChannel.send] for a [Flow]: collects [blocks] as slots free up (the flow suspends while the consumer is
 * behind) and returns the number sent once the consumer confirmed the end.
 */
suspend fun BlockChannel.send(blocks: Flow<Buffer>): Long = send(blocks.asPublisher()).awaitSingle()

/** [BlockChannel.receive] as a [Flow]: each block once its data arrived; release it when done with it. */
fun BlockChannel.receiveFlow(): Flow<ReceivedBlock> = receive().asFlow()

/**
 * [BlockChannel.close]: ends this rank's sides and suspends until they have settled with the peer; collective, every
 * rank closes every channel in the same order (the window is deregistered once every channel of the communicator is).
 */
suspend fun BlockChannel.closeChannel() {
    close().awaitSingleOrNull()
}
