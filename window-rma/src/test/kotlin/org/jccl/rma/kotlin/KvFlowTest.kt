package org.jccl.rma.kotlin

import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.jccl.rma.kv.KvBlockPool
import org.jccl.rma.kv.KvLayer
import org.jccl.rma.kv.KvOptions
import org.jccl.rma.kv.KvRequest
import org.jccl.rma.kv.KvRig
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import java.time.Duration

/** KV transfers from coroutines: layers as a Flow into a suspend send, requests as a Flow out. */
class KvFlowTest {
    @Test
    fun aRequestGoesFromAFlowOfLayersToAFlowOfRequests() {
        val layout = KvRig.small().build()
        KvRig(listOf(layout, layout), 1024).use { rig ->
            runBlocking {
                withTimeout(60_000) {
                    rig.fill(0, 5)
                    val source = rig.pool(0)
                    val receiver = CoroutineKvReceiver.open(rig.pools[1], KvBlockPool(layout.blocks()), KvOptions.DEFAULT)
                    val sender = CoroutineKvSender.open(rig.pools[0], KvOptions.DEFAULT)
                    val from = intArrayOf(4, 2)
                    val layers = (0 until layout.layers()).asFlow().onEach { delay(2) }.map { KvLayer.of(it) }
                    val delivered = sender.send(KvRequest("kotlin", 1, 7, from, Duration.ofSeconds(30)), layers)
                    assertEquals(7L * layout.tokenBytes() * layout.layers() * layout.tensors(), delivered.bytes())
                    val incoming = receiver.incoming.first()
                    assertEquals(layout.layers(), incoming.usableLayers().toList().size)
                    val received = CoroutineKvReceiver.done(incoming)
                    assertEquals(0L, KvRig.wrongBytes(layout, source, from, layout, rig.pool(1), received.blocks(), 7))
                    sender.closeAsync()
                    receiver.closeAsync()
                }
            }
        }
    }
}
