/**
 * The native driver for NCCL (CUDA) and RCCL (HIP): {@code jccl_native.h} compiled into a JNI library by JavaCPP,
 * which loads the vendor libraries at run time, and the {@link org.jccl.core.spi.Driver} built on it. Internal: not
 * for applications.
 */
@NullMarked
package org.jccl.core.nccl;

import org.jspecify.annotations.NullMarked;
