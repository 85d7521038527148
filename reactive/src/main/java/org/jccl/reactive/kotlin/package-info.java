/**
 * Kotlin coroutine extensions (optional: they need {@code kotlin-stdlib} and {@code kotlinx-coroutines-reactor} on
 * the class path): {@code CoroutineCommunicator} has every operation and communicator-level call as a {@code suspend}
 * function of the same name, {@code CoroutineBackend} creates communicators, {@code CoroutineGroup} submits or
 * simulates group calls, {@code Flow.through} runs a pipeline. Obtain them with {@code communicator.coroutines()},
 * {@code backend.coroutines()} and {@code CoroutineGroup.create()}.
 */
@NullMarked
package org.jccl.reactive.kotlin;

import org.jspecify.annotations.NullMarked;
