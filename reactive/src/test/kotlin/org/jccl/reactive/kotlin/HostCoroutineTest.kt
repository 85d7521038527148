package org.jccl.reactive.kotlin

import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactive.awaitFirstOrNull
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.runBlocking
import org.awaitility.Awaitility.await
import org.jccl.core.Backend
import org.jccl.core.BackendKind
import org.jccl.core.Buffer
import org.jccl.core.DataType.FLOAT32
import org.jccl.core.Jccl
import org.jccl.core.Operation
import org.jccl.core.ReduceOp.MAX
import org.jccl.core.ReduceOp.SUM
import org.jccl.core.error.InvalidArgumentException
import org.jccl.reactive.ReactiveGroup
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The coroutine shape on the host backend with two ranks: suspend operations, cancellation, Flow pipelines. */
class HostCoroutineTest {
    private val backend: Backend = Jccl.backend(BackendKind.HOST)
    private val buffers = mutableListOf<Buffer>()
    private val communicators = mutableListOf<CoroutineCommunicator>()
    private val wait = Duration.ofSeconds(30)

    private suspend fun ranks(n: Int = 2): List<CoroutineCommunicator> =
        backend.coroutines().initAll(n).also { communicators += it }

    private fun floats(vararg values: Float): Buffer {
        val b = backend.allocate(-1, maxOf(4L, values.size * 4L))
        buffers += b
        val bytes = ByteBuffer.allocate(values.size * 4).order(ByteOrder.nativeOrder())
        values.forEach { bytes.putFloat(it) }
        bytes.flip()
        b.write(0, bytes)
        return b
    }

    private fun read(b: Buffer, n: Int): FloatArray {
        val bytes = ByteBuffer.allocate(n * 4).order(ByteOrder.nativeOrder())
        b.read(0, bytes)
        bytes.flip()
        return FloatArray(n) { bytes.getFloat() }
    }

    @AfterEach
    fun closeEverything() = runBlocking<Unit> {
        // Every rank closes at once: finalizing one rank may wait for its peers.
        communicators.map { c -> async { if (c.communicator.pendingCount() > 0) c.abort() else c.closeAsync() } }.awaitAll()
        buffers.forEach(Buffer::close)
    }

    @Test
    fun suspendOperationsCompleteInOrderOnEveryRank() = runBlocking<Unit> {
        val comms = ranks()
        val sums = comms.map { floats(1f, 2f, 3f) }
        val maxes = comms.map { c -> floats(c.rank.toFloat()) }
        coroutineScope {
            comms.map { c ->
                async {
                    // Sequential calls in one coroutine per rank: the same order everywhere.
                    c.allReduce(sums[c.rank], sums[c.rank], 3, FLOAT32, SUM)
                    c.allReduce(maxes[c.rank], maxes[c.rank], 1, FLOAT32, MAX)
                }
            }.awaitAll()
        }
        for (r in comms.indices) {
            assertArrayEquals(floatArrayOf(2f, 4f, 6f), read(sums[r], 3))
            assertArrayEquals(floatArrayOf(1f), read(maxes[r], 1))
        }
    }

    @Test
    fun reactiveMonosAwaitWithAwaitSingleAndAwaitFirstOrNull() = runBlocking<Unit> {
        val comms = ranks()
        val children = comms.map { c -> async { c.reactive.split(0, c.rank).awaitSingle() } }.awaitAll()
        communicators += children.map { it.coroutines() }
        assertEquals(listOf(0, 1), children.map { it.rank() }.sorted())
        val b = children.map { floats(5f) }
        children.mapIndexed { i, c -> async { c.allReduce(b[i], b[i], 1, FLOAT32, SUM).awaitFirstOrNull() } }.awaitAll()
        b.forEach { assertArrayEquals(floatArrayOf(10f), read(it, 1)) }
        // A group call as one suspension.
        val out = comms.map { floats(0f) }
        comms.fold(ReactiveGroup.create()) { g, c -> g.add(c.reactive, Operation.allReduce(b[c.rank], out[c.rank], 1, FLOAT32, SUM)) }.await()
        out.forEach { assertArrayEquals(floatArrayOf(20f), read(it, 1)) }
    }

    @Test
    fun badArgumentsThrowTheCoreException() = runBlocking<Unit> {
        val comms = ranks()
        val small = floats(1f)
        assertThrows<InvalidArgumentException> { comms[0].allReduce(small, small, 100, FLOAT32, SUM) }
        assertEquals(0, comms[0].communicator.pendingCount())
    }

    @Test
    fun cancellingAScopeDetachesAndLaterOperationsStillWork() = runBlocking<Unit> {
        val comms = ranks()
        val b0 = floats(1f)
        val scope = CoroutineScope(Job())
        val job = scope.launch { comms[0].allReduce(b0, b0, 1, FLOAT32, SUM) }
        // Rank 0's operation is issued and cannot complete until rank 1 issues its own.
        await().atMost(wait).until { comms[0].communicator.pendingCount() == 1 }
        scope.cancel()
        job.join()
        assertTrue(job.isCancelled)

        comms[1].allReduce(floats(1f), floats(0f), 1, FLOAT32, SUM)
        await().atMost(wait).until { comms[0].communicator.pendingCount() == 0 }
        assertArrayEquals(floatArrayOf(2f), read(b0, 1), "the detached operation ran to completion")

        val after = comms.map { floats(3f) }
        comms.map { c -> async { c.allReduce(after[c.rank], after[c.rank], 1, FLOAT32, SUM) } }.awaitAll()
        after.forEach { assertArrayEquals(floatArrayOf(6f), read(it, 1)) }
    }

    @Test
    fun flowPipelinesEmitEveryItemInOrder() = runBlocking<Unit> {
        val comms = ranks()
        val items = 1_000
        val maxInFlight = 8
        val slots = comms.map { List(maxInFlight) { floats(0f, 0f) } }
        val results = comms.map { c ->
            async {
                (0 until items).asFlow()
                    .through(c, maxInFlight) { i ->
                        val slot = slots[c.rank][i % maxInFlight]
                        val bytes = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putFloat(i.toFloat()).putFloat(1f).flip()
                        slot.write(0, bytes)
                        Operation.allReduce(slot, slot, 2, FLOAT32, SUM)
                    }
                    .map { i ->
                        // Read while the item is emitted: its slot is not reused before this returns.
                        val got = read(slots[c.rank][i % maxInFlight], 2)
                        check(got[0] == 2f * i && got[1] == 2f) { "item $i: ${got.toList()}" }
                        i
                    }
                    .toList()
            }
        }.awaitAll()
        results.forEach { assertEquals((0 until items).toList(), it) }
    }

    @Test
    fun stoppingAFlowPipelineEarlyDetachesWhatItLaunched() = runBlocking<Unit> {
        val comms = ranks()
        val b0 = floats(1f)
        var launched = 0
        // take(2) ends collection after item 1: items 0..3 were launched first, then item 4 after item 0 was taken.
        val firstTwo = async {
            (0 until 100).asFlow()
                .through(comms[0], 4) { launched++; Operation.allReduce(b0, b0, 1, FLOAT32, SUM) }
                .take(2)
                .toList()
        }
        repeat(5) { comms[1].allReduce(floats(1f), floats(0f), 1, FLOAT32, SUM) }
        assertEquals(listOf(0, 1), firstTwo.await())
        assertEquals(5, launched)
        await().atMost(wait).until { comms[0].communicator.pendingCount() == 0 }
        assertArrayEquals(floatArrayOf(6f), read(b0, 1), "1 + five sums with rank 1's ones")
        val after = comms.map { floats(2f) }
        comms.map { c -> async { c.allReduce(after[c.rank], after[c.rank], 1, FLOAT32, SUM) } }.awaitAll()
        after.forEach { assertArrayEquals(floatArrayOf(4f), read(it, 1)) }
    }

    /**
     * The Flow form is stricter than the Flux's: an item counts as taken when its collector returns, not when it is
     * handed to the Flow's buffer. While the collector holds item 0, items 0 and 1 complete and item 2 must wait.
     * The pipeline runs on Dispatchers.Default so that this thread can watch it.
     */
    @Test
    fun aFlowPipelineLaunchesItemIPlusMaxInFlightOnlyAfterItemIWasCollected() = runBlocking<Unit> {
        val comms = ranks()
        val maxInFlight = 2
        val items = 5
        val b0 = floats(0f)
        val b1 = floats(0f)
        val launched = AtomicInteger()
        val holdItem0 = CompletableDeferred<Unit>()
        val rank0 = async(Dispatchers.Default) {
            (0 until items).asFlow()
                .through(comms[0], maxInFlight) { launched.incrementAndGet(); Operation.allReduce(b0, b0, 1, FLOAT32, SUM) }
                .onEach { i -> if (i == 0) holdItem0.await() }
                .toList()
        }
        val rank1 = async(Dispatchers.Default) {
            repeat(items) { comms[1].allReduce(b1, b1, 1, FLOAT32, SUM) }
        }
        await().atMost(wait).until { launched.get() == maxInFlight && comms[0].communicator.pendingCount() == 0 }
        // Both launched operations completed; item 0 is still being collected, so item 2 is not launched.
        await().during(Duration.ofMillis(300)).atMost(wait).until { launched.get() == maxInFlight }
        holdItem0.complete(Unit)
        assertEquals((0 until items).toList(), rank0.await())
        rank1.await()
        assertEquals(items, launched.get())
    }

    @Test
    fun aFlowPipelineRunsItsItemsAndToOperationOnTheCollectorsDispatcher() = runBlocking<Unit> {
        val comms = ranks()
        val bufs = comms.map { floats(1f) }
        val collectorThread = AtomicReference<Thread>()
        val seen = ConcurrentHashMap.newKeySet<Thread>()
        val executor = Executors.newSingleThreadExecutor { r -> Thread(r, "jccl-test-collector").also(collectorThread::set) }
        executor.asCoroutineDispatcher().use { collector ->
            comms.map { c ->
                // Rank 0 records where its items flow and toOperation run; its operations complete on the event thread.
                async(if (c.rank == 0) collector else Dispatchers.Default) {
                    (0 until 50).asFlow()
                        .onEach { if (c.rank == 0) seen += Thread.currentThread() }
                        .through(c, 4) { _ ->
                            if (c.rank == 0) seen += Thread.currentThread()
                            Operation.allReduce(bufs[c.rank], bufs[c.rank], 1, FLOAT32, MAX)
                        }
                        .toList()
                }
            }.awaitAll()
        }
        assertEquals(setOf(collectorThread.get()), seen)
    }
}
