/**
 * The host backend: the whole jccl API in pure Java on the CPU. Ranks are threads of one JVM that exchange data
 * through a {@link org.jccl.core.host.HostTransport} (in-JVM shared memory today, a network transport later);
 * streams are ordered executors, events are generation counters completed on those executors. Internal: reached
 * only through {@link org.jccl.core.spi.Driver}.
 */
@NullMarked
package org.jccl.core.host;

import org.jspecify.annotations.NullMarked;
