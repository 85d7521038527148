/**
 * The driver contract: what a backend implements, found by {@link java.util.ServiceLoader} through
 * {@link org.jccl.core.spi.DriverProvider}. Implemented by the NCCL/RCCL driver ({@code org.jccl.core.nccl}) and the
 * host driver ({@code org.jccl.core.host}); called by the engine and core's API, which hand drivers operations
 * lowered to values ({@link org.jccl.core.spi.LaunchOp}), never application objects.
 * <ul>
 *   <li>{@link org.jccl.core.spi.Driver}: runtime (devices, memory, streams, events) and library (communicator
 *       creation, groups, launches), with {@link org.jccl.core.spi.Features} saying which optional functions the
 *       loaded library has;</li>
 *   <li>{@link org.jccl.core.spi.DriverComm}: one communicator;</li>
 *   <li>capabilities a driver offers or not, for modules ({@link org.jccl.core.spi.DriverComm#capability}):
 *       {@link org.jccl.core.spi.OneSidedComm} (windows, one-sided operations),
 *       {@link org.jccl.core.spi.DeviceCommSupport} (device communicators) and
 *       {@link org.jccl.core.spi.KernelRuntime} (kernels, from {@link org.jccl.core.spi.Driver#kernels()}).</li>
 * </ul>
 * It imports only the value types of core's API ({@code DataType}, {@code CommConfig}, …), never the classes that
 * drive it ({@code Communicator}, {@code Buffer}, {@code Work}). Modules reach it through
 * {@link org.jccl.core.module.ModuleContext}.
 */
@NullMarked
package org.jccl.core.spi;

import org.jspecify.annotations.NullMarked;
