package com.example

import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.jccl.core.DataType
import org.jccl.core.Jccl
import org.jccl.core.ReduceOp
import org.jccl.reactive.kotlin.coroutines

/** The README's Kotlin program: one coroutine per communicator, resuming when every rank's all-reduce completed. */
fun main() = runBlocking {
    val backend = Jccl.backend()
    val comms = backend.coroutines().initAll(2)
    val n = 4096L
    val buf = comms.map { comm ->
        backend.allocate(comm.communicator.device(), 4 * n).also { it.write(0, FloatArray(n.toInt()) { comm.rank + 1f }) }
    }
    coroutineScope {
        comms.forEach { comm -> launch { comm.allReduce(buf[comm.rank], buf[comm.rank], n, DataType.FLOAT32, ReduceOp.SUM) } }
    }
    buf.forEach { println("kotlin sum = " + it.readFloats(0, n.toInt())[0]) }
    buf.forEach { it.close() }
    comms.forEach { it.closeAsync() }
}
