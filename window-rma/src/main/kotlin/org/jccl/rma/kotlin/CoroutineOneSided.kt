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

    /** [OneSided.windows]: the windows registered through this API and not closed. */
    val windows: List<Window> get() = reactive.windows()

    /** [OneSided.allocate]: memory for a window. */
    fun allocate(bytes: Long): Buffer = reactive.allocate(bytes)

    /** [OneSided.register]: collective; suspends until every rank registered. */
    suspend fun register(buffer: Buffer, vararg flags: WindowFlag): Window = reactive.register(buffer, *flags).awaitSingle()

    /** [Window.closeAsync]: collective deregistration after the work issued before. */
    suspend fun close(window: Window) {
        reactive.close(window).awaitSingleOrNull()
    }

    /** [OneSided.putSignal] on signal index 0, context 0; suspends until [source] may be reused. */
    suspend fun putSignal(window: Window, source: Buffer, count: Long, type: DataType, peer: Int, peerOffset: Long) =
        putSignal(window, source, count, type, peer, peerOffset, 0, 0)

    /** [OneSided.putSignal]; suspends until [source] may be reused. */
    suspend fun putSignal(
        window: Window, source: Buffer, count: Long, type: DataType, peer: Int, peerOffset: Long,
        signalIndex: Int, context: Int,
    ) {
        reactive.putSignal(window, source, count, type, peer, peerOffset, signalIndex, context).awaitSingleOrNull()
    }

    /** [OneSided.signal] on signal index 0, context 0. */
    suspend fun signal(peer: Int) = signal(peer, 0, 0)

    /** [OneSided.signal]. */
    suspend fun signal(peer: Int, signalIndex: Int, context: Int) {
        reactive.signal(peer, signalIndex, context).awaitSingleOrNull()
    }

    /** [OneSided.waitSignal]; resumes once the signals' data is visible on this rank. */
    suspend fun waitSignal(vararg waits: SignalWait) {
        reactive.waitSignal(*waits).awaitSingleOrNull()
    }

    companion object {
        /** [OneSided.of]: the one-sided API of [communicator]; also `communicator.oneSided()`. */
        @JvmStatic
        fun of(communicator: CoroutineCommunicator): CoroutineOneSided = CoroutineOneSided(ReactiveOneSided.of(communicator.reactive))

        /** [OneSided.registerAll]: a window on each of [communicators], every registration issued first. */
        @JvmStatic
        suspend fun registerAll(communicators: List<CoroutineCommunicator>, bytes: Long, vararg flags: WindowFlag): List<Window> =
            ReactiveOneSided.registerAll(communicators.map { it.reactive }, bytes, *flags).awaitSingle()

        /** [OneSided.closeAll]: every deregistration issued first, then the windows' memory freed. */
        @JvmStatic
        suspend fun closeAll(windows: List<Window>) {
            ReactiveOneSided.closeAll(windows).awaitSingleOrNull()
        }
    }
}

/** The one-sided API of this communicator, as suspend functions. */
fun CoroutineCommunicator.oneSided(): CoroutineOneSided = CoroutineOneSided.of(this)
