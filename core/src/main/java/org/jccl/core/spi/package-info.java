/**
 * The backend service-provider interface: what the NCCL/RCCL native driver and the host driver implement. The
 * engine and the public API above it see only these types. Not for applications.
 */
@NullMarked
package org.jccl.core.spi;

import org.jspecify.annotations.NullMarked;
