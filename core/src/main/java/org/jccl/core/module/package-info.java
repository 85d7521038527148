/**
 * The module contract: what modules built on core — windows and one-sided operations ({@code window-rma}), device
 * communicators and kernels ({@code device-api}), KV-cache transfers, captured steps — use to add operations of their
 * own to a communicator. Called by those modules; implemented by core, which hands it out through
 * {@link org.jccl.core.Modules#context(org.jccl.core.Communicator)}. Applications do not need it.
 *
 * <p>It sits above the public API (it names {@code Communicator}, {@code Buffer} and {@code Work}) and below the
 * modules: nothing in core's API, engine or drivers imports it. What a module needs from the native library it asks
 * of the driver contract ({@link org.jccl.core.spi}) through {@link org.jccl.core.module.ModuleContext#capability}.
 */
@NullMarked
package org.jccl.core.module;

import org.jspecify.annotations.NullMarked;
