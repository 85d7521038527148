package org.jccl.reactive.kotlin

import io.micrometer.observation.Observation
import io.micrometer.observation.tck.TestObservationRegistry
import io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.reactor.asCoroutineContext
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.jccl.core.Backend
import org.jccl.core.BackendKind
import org.jccl.core.Buffer
import org.jccl.core.DataType.FLOAT32
import org.jccl.core.Jccl
import org.jccl.core.ReduceOp.SUM
import org.jccl.core.observation.JcclObservations
import org.jccl.core.observation.OperationConvention
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import reactor.util.context.Context

/**
 * Tracing through the coroutine shape on two host ranks: the observation a coroutine carries in its Reactor context
 * (kotlinx-coroutines-reactor's `ReactorContext`, passed to every Mono it awaits) parents each operation it calls.
 */
class CoroutineObservationTest {
    private companion object {
        /**
         * `ObservationThreadLocalAccessor.KEY`, spelt out: Kotlin will not compile a reference to that class without
         * Micrometer's context-propagation library, which jccl does not need.
         */
        const val OBSERVATION_KEY = "micrometer.observation"
    }

    private val registry = TestObservationRegistry.create()
    private val observations = JcclObservations.register(registry)
    private val backend: Backend = Jccl.backend(BackendKind.HOST)
    private val buffers = mutableListOf<Buffer>()
    private val communicators = mutableListOf<CoroutineCommunicator>()

    @AfterEach
    fun closeEverything() = runBlocking<Unit> {
        communicators.map { c -> async { c.closeAsync() } }.awaitAll()
        buffers.forEach(Buffer::close)
        observations.close()
    }

    @Test
    fun operationsOfACoroutineAreChildrenOfTheObservationInItsReactorContext() = runBlocking<Unit> {
        val ranks = backend.coroutines().initAll(2).also { communicators += it }
        val request = Observation.start("request", registry)
        withContext(Context.of(OBSERVATION_KEY, request).asCoroutineContext()) {
            ranks.map { c ->
                async {
                    val b = backend.allocate(-1, 8).also { buffers += it }
                    c.allReduce(b, b, 2, FLOAT32, SUM)
                    c.broadcast(b, b, 2, FLOAT32, 0)
                }
            }.awaitAll()
        }
        request.stop()
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(OperationConvention.NAME, 4)
            .forAllObservationsWithNameEqualTo(OperationConvention.NAME) { it.hasParentObservationEqualTo(request) }
    }
}
