package org.jccl.reactive

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.jccl.core.BackendKind
import org.jccl.core.Buffer
import org.jccl.core.CommConfig
import org.jccl.core.CommOptions
import org.jccl.core.DataType.FLOAT32
import org.jccl.core.Jccl
import org.jccl.core.Operation
import org.jccl.core.ReduceOp.SUM
import org.jccl.core.error.InvalidArgumentException
import org.jccl.core.error.UnsupportedFeatureException
import org.jccl.reactive.Ranks.WAIT
import org.jccl.reactive.Ranks.filled
import org.jccl.reactive.Ranks.read
import org.jccl.reactive.kotlin.CoroutineCommunicator
import org.jccl.reactive.kotlin.CoroutineGroup
import org.jccl.reactive.kotlin.coroutines
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The communicator-level calls of the coroutine shape on the host backend with three ranks: those it supports work
 * as suspend functions, and those it lacks throw the typed exception from the suspend call, without hanging. Every
 * test runs under a timeout, so a call that never resumed would fail it.
 */
class HostCoroutineCallsTest {
    private lateinit var ranks: Ranks
    private lateinit var comms: List<CoroutineCommunicator>

    @BeforeEach
    fun openRanks() {
        ranks = Ranks.open(Jccl.backend(BackendKind.HOST), 3, CommOptions.defaults())
        comms = ranks.comms.map { it.coroutines() }
    }

    @AfterEach
    fun closeRanks() = ranks.close()

    private fun test(body: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(WAIT.toMillis(), body) }

    /** Runs [body] on every rank at once (one coroutine each) and returns the results in rank order. */
    private suspend fun <T> CoroutineScope.onEveryRank(of: List<CoroutineCommunicator>, body: suspend (CoroutineCommunicator) -> T): List<T> =
        of.map { c -> async { body(c) } }.awaitAll()

    /** A float buffer on [rank]'s device holding [values], closed with the ranks. */
    private fun floats(rank: Int, vararg values: Float): Buffer = ranks.floats(rank, *values)

    @Test
    fun callsTheHostBackendLacksThrowUnsupportedFeature() = test {
        val comm = comms[0]
        // Keyed by the library function each needs.
        val unsupported = mapOf<String, suspend () -> Any?>(
            "ncclCommSuspend" to { comm.suspend() },
            "ncclCommResume" to { comm.resume() },
            "ncclCommMemStats" to { comm.memStats() },
            "ncclCommRevoke" to { comm.revoke() },
            "ncclCommGetUniqueId" to { comm.growUniqueId() },
            "ncclCommGrow" to { comm.grow(comms.size + 1, null, CommConfig.DEFAULT, CommOptions.defaults()) },
        )
        for ((function, call) in unsupported) {
            val e = assertThrows<UnsupportedFeatureException>(function) { call() }
            assertEquals(function, e.function())
        }
        assertTrue(comm.communicator.isOpen, "a missing feature does not abort the communicator")
        val b = comms.map { c -> floats(c.rank, 1f, 1f) }
        onEveryRank(comms) { c -> c.allReduce(b[c.rank], b[c.rank], 2, FLOAT32, SUM) }
        b.forEach { assertArrayEquals(filled(2, 3f), read(it, 2)) }
    }

    @Test
    fun splitAndSplitExcludedMakeWorkingCommunicators() = test {
        // Reversed keys: child rank = 2 - parent rank.
        val children = onEveryRank(comms) { c -> c.split(0, comms.size - c.rank) }
        children.forEach { ranks.track(it.reactive) }
        assertEquals(listOf(2, 1, 0), children.map { it.rank })
        val b = children.mapIndexed { parent, child -> floats(parent, child.rank.toFloat()) }
        onEveryRank(children) { c -> c.allReduce(b[2 - c.rank], b[2 - c.rank], 1, FLOAT32, SUM) }
        b.forEach { assertArrayEquals(floatArrayOf(3f), read(it, 1)) }

        // Rank 0 alone in colour 7; the others join no new communicator.
        val alone = onEveryRank(comms) { c -> if (c.rank == 0) c.split(7, 0) else c.splitExcluded().let { null } }[0]!!
        ranks.track(alone.reactive)
        assertEquals(1, alone.size)
        val mine = floats(0, 5f)
        alone.allReduce(mine, mine, 1, FLOAT32, SUM)
        assertArrayEquals(floatArrayOf(5f), read(mine, 1))
    }

    @Test
    fun shrinkLeavesTheRemainingRanksInAWorkingCommunicator() = test {
        val remaining = comms.drop(1)
        val shrunk = onEveryRank(remaining) { c -> c.shrink(intArrayOf(0), CommConfig.DEFAULT, CommOptions.defaults()) }
        shrunk.forEach { ranks.track(it.reactive) }
        assertEquals(listOf(0, 1), shrunk.map { it.rank })
        val b = shrunk.map { c -> floats(c.rank + 1, (c.rank + 1).toFloat()) }
        onEveryRank(shrunk) { c -> c.allReduce(b[c.rank], b[c.rank], 1, FLOAT32, SUM) }
        b.forEach { assertArrayEquals(floatArrayOf(3f), read(it, 1)) }
    }

    @Test
    fun preMulSumScalesEachInputAndRegistrationsComeBack() = test {
        val ops = onEveryRank(comms) { c -> c.createPreMulSum(2.0, FLOAT32) }
        try {
            val b = comms.map { c -> floats(c.rank, 1f, 1f) }
            onEveryRank(comms) { c -> c.allReduce(b[c.rank], b[c.rank], 2, FLOAT32, ops[c.rank]) }
            b.forEach { assertArrayEquals(filled(2, 6f), read(it, 2)) }
        } finally {
            ops.forEach { it.close() }
        }
        val memory = ranks.backend.allocateForCommunication(comms[0].communicator.device(), 1024)
        try {
            val registration = comms[0].register(memory)
            assertEquals(memory, registration.buffer())
            registration.close()
        } finally {
            memory.close()
        }
    }

    @Test
    fun aCoroutineGroupSubmitsAndSimulates() = test {
        val b = comms.map { c -> floats(c.rank, 1f, 1f) }
        val group = comms.fold(CoroutineGroup.create()) { g, c -> g.add(c, Operation.allReduce(b[c.rank], b[c.rank], 2, FLOAT32, SUM)) }
        assertEquals(comms.size, group.size)

        val estimate = group.simulate()
        assertTrue(estimate > 0f, "estimate $estimate")
        comms.forEach { assertEquals(0, it.communicator.pendingCount()) }
        b.forEach { assertArrayEquals(filled(2, 1f), read(it, 2), "simulating runs nothing") }

        group.submit()
        b.forEach { assertArrayEquals(filled(2, 3f), read(it, 2)) }
        assertThrows<InvalidArgumentException> { CoroutineGroup.create().submit() }
        assertThrows<InvalidArgumentException> { CoroutineGroup.create().simulate() }
    }
}
