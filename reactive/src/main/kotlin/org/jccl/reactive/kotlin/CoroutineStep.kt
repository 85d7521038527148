package org.jccl.reactive.kotlin

import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.core.Step
import org.jccl.reactive.ReactiveStep

/** The coroutine shape of [Step]: replays suspend until they complete, holding no thread. */
class CoroutineStep(
    /** The reactive shape this wraps. */
    val reactive: ReactiveStep,
) {
    /** The core shape. */
    val core: Step get() = reactive.core()

    /** [Step.replay]: one replay, in call order with the communicator's other operations. */
    suspend fun replay() {
        reactive.replay().awaitSingleOrNull()
    }

    /** [Step.closeAsync]. */
    suspend fun closeAsync() {
        reactive.closeAsync().awaitSingleOrNull()
    }

    companion object {
        /** [Step.Builder.build] on [communicator]: captures the builder's operations. */
        @JvmStatic
        suspend fun build(communicator: CoroutineCommunicator, builder: Step.Builder): CoroutineStep =
            CoroutineStep(ReactiveStep.build(communicator.reactive, builder).awaitSingle())
    }
}
