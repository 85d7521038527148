package org.jccl.reactive.kotlin

import kotlinx.coroutines.reactor.awaitSingle
import org.jccl.core.Backend
import org.jccl.core.CommConfig
import org.jccl.core.CommOptions
import org.jccl.core.UniqueId
import org.jccl.reactive.ReactiveBackend

/**
 * Communicator creation as `suspend` functions; nothing blocks the caller's thread. Obtained with
 * [Backend.coroutines]. Cancelling a creation detaches; the communicator is closed once ready, so nothing leaks.
 */
class CoroutineBackend(
    /** The reactive shape this wraps. */
    val reactive: ReactiveBackend,
) {
    /** The core backend. */
    val backend: Backend get() = reactive.backend()

    /** [Backend.initRank] with a configuration and options. */
    suspend fun initRank(id: UniqueId, nranks: Int, rank: Int, device: Int, config: CommConfig, options: CommOptions): CoroutineCommunicator =
        CoroutineCommunicator(reactive.initRank(id, nranks, rank, device, config, options).awaitSingle())

    /** [Backend.initRank] with the defaults. */
    suspend fun initRank(id: UniqueId, nranks: Int, rank: Int, device: Int): CoroutineCommunicator =
        CoroutineCommunicator(reactive.initRank(id, nranks, rank, device).awaitSingle())

    /** [Backend.initRankScalable]. */
    suspend fun initRankScalable(ids: List<UniqueId>, nranks: Int, rank: Int, device: Int, config: CommConfig, options: CommOptions): CoroutineCommunicator =
        CoroutineCommunicator(reactive.initRankScalable(ids, nranks, rank, device, config, options).awaitSingle())

    /** [Backend.initAll]: one communicator per device, in rank order. */
    suspend fun initAll(devices: IntArray, options: CommOptions): List<CoroutineCommunicator> =
        reactive.initAll(devices, options).awaitSingle().map(::CoroutineCommunicator)

    /** [Backend.initAll]: [n] ranks, default options. */
    suspend fun initAll(n: Int): List<CoroutineCommunicator> =
        reactive.initAll(n).awaitSingle().map(::CoroutineCommunicator)
}

/** The coroutine shape of this backend. */
fun Backend.coroutines(): CoroutineBackend = CoroutineBackend(ReactiveBackend.of(this))
