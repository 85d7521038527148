package org.jccl.rma.kotlin

import java.util.concurrent.TimeUnit
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.jccl.core.BackendKind
import org.jccl.core.DataType
import org.jccl.core.Jccl
import org.jccl.reactive.kotlin.coroutines
import org.jccl.rma.SignalWait
import org.jccl.rma.WindowFlag
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The Kotlin shapes: suspend one-sided calls and the block channel as flows, on two host ranks of this JVM. */
class BlockChannelFlowTest {
    private val host = Jccl.backend(BackendKind.HOST)

    @Test
    fun suspendPutsAndAFlowThroughTheChannel() = runBlocking {
        val comms = host.initAll(2).get(30, TimeUnit.SECONDS).map { it.coroutines() }
        try {
            withTimeout(60_000) {
                val rma = comms.map { it.oneSided() }
                val windows = coroutineScope { rma.map { r -> async { r.register(r.allocate(1L shl 16), WindowFlag.COLL_SYMMETRIC) } }.awaitAll() }
                val source = windows[0].buffer().slice(0, 8)
                source.write(0, intArrayOf(5, 6))
                rma[0].putSignal(windows[0], source, 2, DataType.INT32, 1, 64)
                rma[1].waitSignal(SignalWait.of(0, 1))
                assertArrayEquals(intArrayOf(5, 6), windows[1].buffer().readInts(64, 2))
                coroutineScope { windows.mapIndexed { i, w -> async { rma[i].close(w) } }.awaitAll() }

                val channels = coroutineScope { comms.map { c -> async { c.openBlockChannel(0, 1, 4, 64) } }.awaitAll() }
                val blocks = (0 until 50).map { i -> host.allocate(-1, 8).also { it.write(0, longArrayOf(i * 3L)) } }
                val (sent, received) = coroutineScope {
                    val producer = async { channels[0].send(blocks.asFlow()) }
                    val consumer = async {
                        channels[1].receiveFlow().map { b -> b.data().readLongs(0, 1)[0].also { b.release() } }.toList()
                    }
                    producer.await() to consumer.await()
                }
                assertEquals(50L, sent)
                assertEquals((0 until 50).map { it * 3L }, received)
                coroutineScope { channels.map { c -> async { c.closeChannel() } }.awaitAll() }
                blocks.forEach { it.close() }
            }
        } finally {
            comms.forEach { it.communicator.close() }
        }
    }
}
