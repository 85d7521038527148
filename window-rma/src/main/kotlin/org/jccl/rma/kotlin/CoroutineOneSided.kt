package org.jccl.rma.kotlin

import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.core.Buffer
import org.jccl.core.DataType
import org.jccl.core.spi.OneSidedLimits
import org.jccl.reactive.kotlin.CoroutineCommunicator
import org.jccl.rma.OneSided
import org.jccl.rma.SignalWait
import org.jccl.rma.Window
import org.jccl.rma.WindowFlag
import org.jccl.rma.reactive.ReactiveOneSided

/**
 * The coroutine shape of [OneSided]: each call issues its operation when called and suspends until it completes.
 * Cancelling the caller only detaches; an issued put still runs to completion.
 */
class CoroutineOneSided(
    /** The reactive shape this wraps. */
    val reactive: ReactiveOneSided,
) {
    /** The core shape. */
    val core: OneSided get() = reactive.core()

    /** [OneSided.limits]. */
    val limits: OneSidedLimits get() = reactive.limits()

    /** [OneSided.allocate]: memory for a window. */
    fun allocate(bytes: Long): Buffer = reactive.allocate(bytes)

    /** [OneSided.register]: collective; suspends until every rank registered. */
    suspend fun register(buffer: Buffer, vararg flags: WindowFlag): Window = reactive.register(buffer, *flags).awaitSingle()

    /** [Window.closeAsync]: collective deregistration after the work issued before. */
    suspend fun close(window: Window) {
        reactive.close(window).awaitSingleOrNull()
    }

    /** [OneSided.putSignal]; suspends until [source] may be reused. */
    suspend fun putSignal(
        window: Window, source: Buffer, count: Long, type: DataType, peer: Int, peerOffset: Long,
        signalIndex: Int = 0, context: Int = 0,
    ) {
        reactive.putSignal(window, source, count, type, peer, peerOffset, signalIndex, context).awaitSingleOrNull()
    }

    /** [OneSided.signal]. */
    suspend fun signal(peer: Int, signalIndex: Int = 0, context: Int = 0) {
        reactive.signal(peer, signalIndex, context).awaitSingleOrNull()
    }

    /** [OneSided.waitSignal]; resumes once the signals' data is visible on this rank. */
    suspend fun waitSignal(vararg waits: SignalWait) {
        reactive.waitSignal(*waits).awaitSingleOrNull()
    }
}

/** The one-sided API of this communicator, as suspend functions. */
fun CoroutineCommunicator.oneSided(): CoroutineOneSided = CoroutineOneSided(ReactiveOneSided.of(reactive))
