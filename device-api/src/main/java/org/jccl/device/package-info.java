/**
 * NCCL's device API from Java: {@link org.jccl.device.DeviceApi} per communicator — its
 * {@link org.jccl.device.DeviceProperties}, device communicators ({@link org.jccl.device.DeviceComm}) and kernel
 * launches on its stream; {@link org.jccl.device.KernelCompiler} (NVRTC against the loaded NCCL's headers) and
 * {@link org.jccl.device.KernelLibrary} (PTX, cubin or fatbin images) for the kernels.
 */
@NullMarked
package org.jccl.device;

import org.jspecify.annotations.NullMarked;
