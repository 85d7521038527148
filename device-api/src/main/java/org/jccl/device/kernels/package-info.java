/** Kernels jccl ships as CUDA source, each with its Java entry point: an LSA all-to-all and an LSA put with signal. */
@NullMarked
package org.jccl.device.kernels;

import org.jspecify.annotations.NullMarked;
