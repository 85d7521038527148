package org.jccl.device.kotlin

import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.jccl.device.KernelArgs
import org.jccl.device.KernelImage
import org.jccl.device.KernelLibrary
import org.jccl.device.LaunchConfig
import org.jccl.device.StubBackend
import org.jccl.reactive.kotlin.coroutines
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The Kotlin shape on the stub backend: create a device communicator, launch with it, close it, all suspending. */
class CoroutineDeviceApiTest {
    @Test
    fun createLaunchAndCloseSuspending() = runBlocking {
        val comm = StubBackend.communicator().coroutines()
        val api = comm.deviceApi()
        withTimeout(30_000) {
            assertTrue(api.properties().queried())
            val devComm = api.create(deviceCommRequirements { lsaBarrierCount(2) })
            assertEquals(1, devComm.lsaSize())
            KernelLibrary.load(StubBackend.backend(), KernelImage.ptx("kernel step 224 8\n")).use { library ->
                StubBackend.calls("libcuda.so.1")
                api.launch(library.kernel("step"), LaunchConfig.of(2, 64), KernelArgs.create().deviceComm(devComm).int64(3))
                assertEquals(1, StubBackend.calls("libcuda.so.1").count { it.startsWith("cuLaunchKernel") })
            }
            api.close(devComm)
            assertTrue(devComm.isClosed())
        }
    }
}
