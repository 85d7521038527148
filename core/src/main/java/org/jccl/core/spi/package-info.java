/**
 * The service-provider interfaces, not for applications. Two sides:
 * <ul>
 *   <li>what a backend implements — {@link org.jccl.core.spi.Driver}, {@link org.jccl.core.spi.DriverComm},
 *       streams, events, memory — receiving operations lowered to values ({@link org.jccl.core.spi.LaunchOp});</li>
 *   <li>what modules that build on core use — {@link org.jccl.core.spi.CommunicatorSpi}, from
 *       {@code Communicator.spi()}: the native communicator, its stream, launch queue and function table, and the
 *       event thread.</li>
 * </ul>
 */
@NullMarked
package org.jccl.core.spi;

import org.jspecify.annotations.NullMarked;
