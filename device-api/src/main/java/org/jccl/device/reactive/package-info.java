/** The device API as Reactor {@code Mono}s. */
@NullMarked
package org.jccl.device.reactive;

import org.jspecify.annotations.NullMarked;
