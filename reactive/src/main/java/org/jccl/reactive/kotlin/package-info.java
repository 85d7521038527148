/**
 * Kotlin coroutine extensions (optional: they need {@code kotlin-stdlib} and {@code kotlinx-coroutines-reactor} on
 * the class path): {@code CoroutineCommunicator} has every operation as a {@code suspend} function of the same name,
 * {@code CoroutineBackend} creates communicators, {@code Flow.through} runs a pipeline. Obtain them with
 * {@code communicator.coroutines()} and {@code backend.coroutines()}.
 */
@NullMarked
package org.jccl.reactive.kotlin;

import org.jspecify.annotations.NullMarked;
