package org.jccl.device.kotlin

import java.time.Duration
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import org.jccl.core.Stream
import org.jccl.device.DeviceApi
import org.jccl.device.DeviceComm
import org.jccl.device.DeviceCommRequirements
import org.jccl.device.DeviceProperties
import org.jccl.device.Kernel
import org.jccl.device.KernelArgs
import org.jccl.device.LaunchConfig
import org.jccl.device.reactive.ReactiveDeviceApi
import org.jccl.reactive.kotlin.CoroutineCommunicator

/**
 * The coroutine shape of [DeviceApi]: each call issues when called and suspends until it completes, holding no
 * thread. Cancelling the caller only detaches; an issued kernel still runs to completion.
 */
class CoroutineDeviceApi(
    /** The reactive shape this wraps. */
    val reactive: ReactiveDeviceApi,
) {
    /** The core shape. */
    val core: DeviceApi get() = reactive.core()

    /** [DeviceApi.properties]. */
    suspend fun properties(): DeviceProperties = reactive.properties().awaitSingle()

    /** [DeviceApi.create]: collective; suspends until every rank created it. */
    suspend fun create(requirements: DeviceCommRequirements): DeviceComm = reactive.create(requirements).awaitSingle()

    /** [DeviceComm.closeAsync]: destroyed after the kernels issued before. */
    suspend fun close(deviceComm: DeviceComm) {
        reactive.close(deviceComm).awaitSingleOrNull()
    }

    /** [DeviceApi.launch]; resumes when the kernel completed. */
    suspend fun launch(kernel: Kernel, config: LaunchConfig, args: KernelArgs) {
        reactive.launch(kernel, config, args).awaitSingleOrNull()
    }

    /** [DeviceApi.launch] with its own [timeout] (zero: none). */
    suspend fun launch(kernel: Kernel, config: LaunchConfig, args: KernelArgs, timeout: Duration) {
        reactive.launch(kernel, config, args, timeout).awaitSingleOrNull()
    }

    /** [DeviceApi.launch] on an application's [stream]; resumes when the stream passed the kernel. */
    suspend fun launch(stream: Stream, kernel: Kernel, config: LaunchConfig, args: KernelArgs) {
        reactive.launch(stream, kernel, config, args).awaitSingleOrNull()
    }

    companion object {
        /** [DeviceApi.of]: the device API of [communicator]; also `communicator.deviceApi()`. */
        @JvmStatic
        fun of(communicator: CoroutineCommunicator): CoroutineDeviceApi = CoroutineDeviceApi(ReactiveDeviceApi.of(communicator.reactive))

        /** [DeviceApi.createAll]: device communicators on several communicators of this process, in one group. */
        @JvmStatic
        suspend fun createAll(communicators: List<CoroutineCommunicator>, requirements: DeviceCommRequirements): List<DeviceComm> =
            ReactiveDeviceApi.createAll(communicators.map { it.reactive }, requirements).awaitSingle()
    }
}

/** The device API of this communicator, as suspend functions. */
fun CoroutineCommunicator.deviceApi(): CoroutineDeviceApi = CoroutineDeviceApi.of(this)

/** Builds [DeviceCommRequirements]: `deviceCommRequirements { lsaBarrierCount(4) }`. */
fun deviceCommRequirements(block: DeviceCommRequirements.Builder.() -> Unit): DeviceCommRequirements =
    DeviceCommRequirements.builder().apply(block).build()
