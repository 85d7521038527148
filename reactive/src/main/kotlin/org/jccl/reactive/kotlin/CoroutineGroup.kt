package org.jccl.reactive.kotlin

import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.core.Group
import org.jccl.core.Operation
import org.jccl.core.module.StreamOperation
import org.jccl.reactive.ReactiveGroup

/**
 * The coroutine shape of a [Group]: operations on one or several communicators, issued between one
 * `ncclGroupStart`/`ncclGroupEnd` each time [submit] is called. Immutable, like [ReactiveGroup], which it wraps:
 * [add] returns a new group, and bad operations make [submit] throw without issuing anything.
 *
 * ```
 * CoroutineGroup.create()
 *     .add(comm, Operation.send(out, n, FLOAT32, peer))
 *     .add(comm, Operation.recv(into, n, FLOAT32, peer))
 *     .submit()
 * ```
 */
class CoroutineGroup(
    /** The reactive shape this wraps. */
    val reactive: ReactiveGroup,
) {
    /** How many operations the group holds. */
    val size: Int get() = reactive.size()

    /** A group with [operation] of [communicator] added after this group's operations. */
    fun add(communicator: CoroutineCommunicator, operation: Operation): CoroutineGroup =
        CoroutineGroup(reactive.add(communicator.reactive, operation))

    /** A group with [operation] of a module built on core (a window's put, a kernel launch) added. */
    fun add(communicator: CoroutineCommunicator, operation: StreamOperation): CoroutineGroup =
        CoroutineGroup(reactive.add(communicator.reactive, operation))

    /** [Group.submit]: issues the whole group and suspends until every operation in it has completed. */
    suspend fun submit() {
        reactive.submit().awaitSingleOrNull()
    }

    /** [Group.simulate]: the library's estimate of the group's time in microseconds, without launching it. */
    suspend fun simulate(): Float = reactive.simulate().awaitSingle()

    /** Holds [create], a static method for Java callers as [Group.create] is. */
    companion object {
        /** An empty group. */
        @JvmStatic
        fun create(): CoroutineGroup = CoroutineGroup(ReactiveGroup.create())
    }
}

/** The coroutine shape of this group. */
fun ReactiveGroup.coroutines(): CoroutineGroup = CoroutineGroup(this)

/** Issues this group call and suspends until every operation in it has completed: [CoroutineGroup.submit]. */
suspend fun ReactiveGroup.await() {
    coroutines().submit()
}
