/**
 * Glue between the core and Reactor that applications do not use directly: the event thread factory that makes
 * jccl's event thread Reactor's {@code NonBlocking}.
 */
@NullMarked
package org.jccl.reactive.internal;

import org.jspecify.annotations.NullMarked;
